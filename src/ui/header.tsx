import { Box, Text } from 'ink';
import { printable } from '../frontend/printable.js';

export interface HeaderProps {
  model: string;
  dir: string;
  team: string;
  lead: string;
  auto: boolean;
  /** What the session's teammates spent so far (`38k tok · $0.137`). */
  spent?: string;
}

export function Header({ model, dir, team, lead, auto, spent }: HeaderProps) {
  return (
    <Box flexDirection="column">
      <Text wrap="truncate-end">
        <Text bold color="cyan">
          autoteam
        </Text>
        <Text dimColor> · model: </Text>
        <Text>{model}</Text>
      </Text>
      {/* What was spent goes on the shorter line: the model's (the offline one names the keys to set) fills 100 columns. */}
      <Text dimColor wrap="truncate-end">
        board {printable(dir)} · team {printable(team)} · lead {lead}
        {auto ? ' · auto answers on' : ''}
        {spent ? ` · spent ${spent}` : ''}
      </Text>
    </Box>
  );
}
