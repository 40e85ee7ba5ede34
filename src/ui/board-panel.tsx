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

const PIPELINE_GAP = 2;

/** A pipeline's entry: `pipeline #3 approved · merged into main (14 model calls · 9,013 tokens · $0.04)`. */
function pipelineEntry(view: BoardView, id: number, status: string): { main: string; dim: string } {
  const outcome = view.outcomes.get(id);
  const usage = view.usage.get(id);
  const cost = view.cost?.get(id);
  return { main: `pipeline #${id} ${status}${outcome ? ` · ${outcome}` : ''}`, dim: usage ? ` (${formatUsage(usage)}${cost !== undefined ? ` · ${formatCost(cost)}` : ''})` : '' };
}

/**
 * The newest pipelines whose entries fit `lines` lines of `width`, each entry whole on its line (one
 * that does not fit goes to the next, never cut in its middle; the newest is kept even when it does
 * not fit alone, to be cut at its end), as lines of entry indexes into
 * `widths` (-1: where `more`, the count of older ones left out, is said, in `moreWidth` columns).
 */
export function packPipelines(widths: readonly number[], width: number, lines: number, moreWidth: (count: number) => number): { rows: number[][]; more: number } {
  const pack = (count: number) => {
    const more = widths.length - count;
    const entries = [...widths.slice(widths.length - count).map((w, i) => ({ index: widths.length - count + i, w })), ...(more ? [{ index: -1, w: moreWidth(more) }] : [])];
    const rows: number[][] = [];
    let used = Infinity;
    for (const { index, w } of entries) {
      if (used + PIPELINE_GAP + w > width) {
        rows.push([]);
        used = -PIPELINE_GAP;
      }
      rows.at(-1)!.push(index);
      used += PIPELINE_GAP + w;
    }
    return { rows, more, fits: rows.length <= lines };
  };
  // The newest always: on a line of its own with the count, cut to fit if it is wider (the caller lets it shrink).
  if (widths.length === 0) return { rows: [], more: 0 };
  let best = { rows: [[widths.length - 1, ...(widths.length > 1 ? [-1] : [])]], more: widths.length - 1 };
  for (let count = 1; count <= widths.length; count++) {
    const tried = pack(count);
    if (!tried.fits) break;
    best = tried;
  }
  return best;
}

const moreText = (count: number) => `+${count} more (/tasks)`;

export function BoardPanel({ view, width, pipelineLines = 2 }: { view: BoardView; width: number; pipelineLines?: number }) {
  const { counts } = view;
  const all = [...view.pipelines].map(([id, status]) => ({ id, status, ...pipelineEntry(view, id, status) }));
  const packed = packPipelines(all.map((entry) => entry.main.length + entry.dim.length), width, pipelineLines, (count) => moreText(count).length);
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
      {packed.rows.map((row, line) => (
        // Each pipeline whole on its line; the oldest left out when they do not fit the panel's lines.
        <Box key={line} columnGap={PIPELINE_GAP}>
          {row.map((index) => {
            if (index < 0) {
              return (
                <Box key="more" flexShrink={0}>
                  <Text dimColor>{moreText(packed.more)}</Text>
                </Box>
              );
            }
            const { id, status, main, dim } = all[index]!;
            return (
              <Box key={id} flexShrink={1}>
                <Text wrap="truncate-end" color={status === 'approved' ? 'green' : status === 'failed' ? 'red' : status === 'cancelled' ? 'gray' : 'yellow'}>
                  {main}
                  <Text dimColor>{dim}</Text>
                </Text>
              </Box>
            );
          })}
        </Box>
      ))}
    </Box>
  );
}
