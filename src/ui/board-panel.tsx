import { Box, Text } from 'ink';
import { formatCost } from '../core/model/pricing.js';
import { formatTaskLine, formatUsage } from '../frontend/format.js';
import type { Task } from '../core/board/schemas.js';
import type { BoardView } from './stores.js';

const COLORS: Record<Task['status'], string | undefined> = {
  pending: undefined,
  in_progress: 'yellow',
  completed: 'green',
  failed: 'red',
  cancelled: 'gray',
};

export function BoardPanel({ view, width }: { view: BoardView; width: number }) {
  const { counts } = view;
  const pipelines = [...view.pipelines].slice(-4);
  // With several pipelines on the board, each line names its own (`p2`).
  const several = view.pipelines.size > 1;
  return (
    <Box flexDirection="column" borderStyle="round" borderColor="gray" paddingX={1}>
      <Text>
        <Text bold>Board</Text>
        <Text dimColor>
          {' '}
          {view.total} {view.total === 1 ? 'task' : 'tasks'} · {counts.pending} pending · {counts.in_progress} in progress · {counts.completed} done
          {counts.failed ? ` · ${counts.failed} failed` : ''}
          {counts.cancelled ? ` · ${counts.cancelled} cancelled` : ''}
          {view.total > view.shown.length ? ` · showing ${view.shown.length}` : ''}
        </Text>
        {view.problems ? <Text color="red"> · {view.problems} unreadable task file{view.problems === 1 ? '' : 's'} (autoteam tasks names them)</Text> : null}
      </Text>
      {view.shown.length === 0 ? <Text dimColor>No tasks yet — type a requirement.</Text> : null}
      {view.shown.map((task) => (
        <Text key={task.id} color={COLORS[task.status]} wrap="truncate-end">
          {formatTaskLine(task, width, { pipeline: several })}
        </Text>
      ))}
      {pipelines.length ? (
        // Each pipeline whole: one that does not fit the line goes to the next, never cut in its middle.
        <Box flexWrap="wrap" columnGap={2}>
          {pipelines.map(([id, status]) => (
            <Text key={id} wrap="truncate-end" color={status === 'approved' ? 'green' : status === 'failed' ? 'red' : status === 'cancelled' ? 'gray' : 'yellow'}>
              pipeline #{id} {status}
              {view.outcomes.has(id) ? ` · ${view.outcomes.get(id)}` : ''}
              <Text dimColor>
                {view.usage.get(id) ? ` (${formatUsage(view.usage.get(id)!)}${view.cost?.has(id) ? ` · ${formatCost(view.cost.get(id)!)}` : ''})` : ''}
              </Text>
            </Text>
          ))}
        </Box>
      ) : null}
    </Box>
  );
}
