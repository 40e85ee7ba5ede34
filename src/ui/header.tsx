import { Box, Text } from 'ink';

export interface HeaderProps {
  model: string;
  dir: string;
  team: string;
  lead: string;
  auto: boolean;
}

export function Header({ model, dir, team, lead, auto }: HeaderProps) {
  return (
    <Box flexDirection="column">
      <Text>
        <Text bold color="cyan">
          autoteam
        </Text>
        <Text dimColor> · model: </Text>
        <Text>{model}</Text>
      </Text>
      <Text dimColor>
        board {dir} · team {team} · lead {lead}
        {auto ? ' · auto answers on' : ''}
      </Text>
    </Box>
  );
}
