import { Static, Text } from 'ink';
import type { Tone } from '../frontend/commands.js';
import type { FeedItem } from './stores.js';

const TONES: Record<Tone, { color?: string; dim?: boolean; bold?: boolean }> = {
  info: {},
  reply: { color: 'cyan' },
  error: { color: 'red' },
  question: { color: 'magenta', bold: true },
  answer: { color: 'magenta' },
  pipeline: { color: 'green', bold: true },
  activity: { dim: true },
  says: { color: 'white' },
  command: { color: 'blue' },
};

/** The scrolling log: each item is printed once above the live panels. */
export function ActivityLog({ items }: { items: readonly FeedItem[] }) {
  return (
    <Static items={[...items]}>
      {(item) => {
        const tone = TONES[item.tone];
        return (
          <Text key={item.id} color={tone.color} dimColor={tone.dim} bold={tone.bold}>
            {item.text}
          </Text>
        );
      }}
    </Static>
  );
}
