import { setTimeout as sleep } from 'node:timers/promises';
import type { Task } from '../board/schemas.js';
import type { EventLog } from '../events/log.js';
import type { TeamEvent } from '../events/schema.js';
import { summarizeTrace, type TraceSummary } from '../trace/summary.js';
import type { TraceRecord } from '../trace/trace.js';

/** How long the log is waited for to hold the end of a task another process worked (see workSummary). */
const LOG_CATCH_UP = { tries: 20, ms: 100 };

/**
 * The model calls, tools and tokens per role on `tasks` since `since` (ISO time): this process's trace,
 * and from the board's log (the pipeline's events, whatever their clock says) each task attempt the trace does not hold — another process's work (an
 * `autoteam worker` on a PostgreSQL board keeps its trace on its own machine). A worker's events
 * reach the log a moment after its task's end reached the board: a task that ended under another
 * process's teammate is waited for, two seconds at most, until the log holds its end too.
 */
export async function workSummary(trace: readonly TraceRecord[], log: Pick<EventLog, 'read'>, tasks: readonly Task[], since: string, catchUp = LOG_CATCH_UP): Promise<TraceSummary> {
  const ids = new Set(tasks.map((task) => task.id));
  const own = trace.filter((record): record is Call => record.at >= since && (record.kind === 'model_call' || record.kind === 'tool_call') && record.task !== null && ids.has(record.task));
  const held = new Set(own.map((record) => attempt(record.task, record.agent)));
  const elsewhere = tasks.filter((task) => (task.status === 'completed' || task.status === 'failed') && task.owner && !held.has(attempt(task.id, task.owner)));
  // By pipeline, not by time: the events carry their own machine's clock, which may be behind this one's.
  const pipeline = tasks.find((task) => task.pipeline != null)?.pipeline;
  const filter = { ...(pipeline != null ? { pipeline } : { since: new Date(since) }), types: ['model_call', 'tool_call', 'task_completed', 'task_failed'] as const };
  let events: TeamEvent[] = [];
  for (let tries = 0; ; tries++) {
    events = (await log.read(filter)).filter((event) => event.task != null && ids.has(event.task));
    const ended = new Set(events.filter((event) => event.type === 'task_completed' || event.type === 'task_failed').map((event) => event.task));
    if (tries >= catchUp.tries || elsewhere.every((task) => ended.has(task.id))) break;
    await sleep(catchUp.ms);
  }
  const roleOf = new Map(tasks.map((task) => [task.id, task.role ?? 'any']));
  const others = events.filter((event) => event.agent && !held.has(attempt(event.task!, event.agent))).flatMap((event) => recordOf(event, roleOf.get(event.task!)!) ?? []);
  return summarizeTrace([...own, ...others]);
}

type Call = Extract<TraceRecord, { kind: 'model_call' | 'tool_call' }>;

const attempt = (task: number | null, agent: string) => `${task}/${agent}`;

/** A model or tool call of the board's log as the trace record it would have been. */
function recordOf(event: TeamEvent, taskRole: string): TraceRecord | null {
  const common = { agent: event.agent!, role: event.role ?? taskRole, stage: null, task: event.task ?? null, at: event.ts, pid: 0 };
  if (event.type === 'model_call') {
    const { stopReason, inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, latencyMs, model } = event;
    return { kind: 'model_call', ...common, stopReason, inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, ms: latencyMs, model };
  }
  if (event.type === 'tool_call') return { kind: 'tool_call', ...common, tool: event.tool, ok: event.outcome === 'ok', ms: event.durationMs };
  return null;
}
