import { setMaxListeners } from 'node:events';
import type { PipelineState } from '../stages/pipeline.js';
import type { LeadApi } from './lead-api.js';
import type { TaskBoardLike } from '../board/task-rules.js';
import { pipelineStatuses } from '../stages/pipeline-status.js';
import type { Task } from '../board/schemas.js';
import { ANY_ROLE } from '../board/task-checks.js';
import { type BoardProblem, mayFollow, unreadTasks } from '../board/task-index.js';

/**
 * Why the team is still busy, or null when nothing can still move: a pipeline is active, a task is
 * in progress, or a general task waits for a running teammate to claim it — unless no teammate
 * runs or rests (`running` holds the resting too: a post brings them back), a fatal model error
 * `stopped` them, or the team waits on a question nobody will answer. A task whose plan waits for
 * the person's decision (`awaiting`) is not work in flight; nor is a pipeline whose open tasks all
 * wait, for that decision or for roles nobody `serving` takes (the person shut its engineer down):
 * `stuckPipelines` names it.
 */
export function busyReason(state: {
  running: ReadonlyArray<{ role: string }>;
  stopped: boolean;
  unanswered: boolean;
  tasks: Pick<TaskBoardLike, 'list' | 'scanUnclaimed'>;
  /** The roles some teammate takes: running, resting (started again for work), or live in another process. */
  serving: ReadonlySet<string>;
  /** Tasks in progress whose teammate waits for the person's decision on its plan. */
  awaiting?: ReadonlySet<number>;
  /** Task files that do not read (the board's problems): one may hold a pipeline's next stage. */
  problems?: readonly BoardProblem[];
}): string | null {
  // No teammate here, but live ones elsewhere (`autoteam worker`): their work is in flight too.
  if ((state.running.length === 0 && state.serving.size === 0) || state.stopped || state.unanswered) return null;
  const tasks = state.tasks.list();
  const awaiting = state.awaiting ?? new Set<number>();
  const stuck = new Set(stuckPipelines(tasks, state.serving, awaiting, unreadTasks(state.problems ?? [])).map(({ pipeline }) => pipeline));
  const active = [...pipelineStatuses(tasks)].filter(([id, status]) => status === 'active' && !stuck.has(id)).map(([id]) => id);
  if (active.length) return `pipeline ${active.map((id) => `#${id}`).join(', ')} still active`;
  const working = tasks.filter((task) => task.status === 'in_progress' && !awaiting.has(task.id));
  if (working.length) return `task ${working.map((task) => `#${task.id}`).join(', ')} in progress`;
  const roles = new Set(state.running.map((handle) => handle.role));
  const claimable = new Set([...roles].flatMap((role) => state.tasks.scanUnclaimed(role)).filter((task) => task.pipeline === null).map((task) => `#${task.id}`));
  return claimable.size ? `task ${[...claimable].join(', ')} waiting to be claimed` : null;
}

/**
 * Active pipelines nothing here moves: every open task of theirs either waits, pending, for a role
 * nobody `serving` takes, or is in progress with its teammate waiting for the person (`awaiting`: a
 * plan's decision). A pipeline with no open task is between two stages, not stuck — unless a task
 * file posted after its last task does not read (`unread`): that file may be its next stage, which
 * nobody takes and which no repair posts again.
 */
export function stuckPipelines(tasks: readonly Task[], serving: ReadonlySet<string>, awaiting: ReadonlySet<number> = new Set(), unread: ReturnType<typeof unreadTasks> = []): Array<{ pipeline: number; waiting: Task[] }> {
  const served = (task: Task) => task.role === null || serving.has(task.role) || serving.has(ANY_ROLE);
  const still = (task: Task) => (task.status === 'pending' ? !served(task) : awaiting.has(task.id));
  const stuck: Array<{ pipeline: number; waiting: Task[] }> = [];
  for (const [pipeline, status] of pipelineStatuses(tasks)) {
    if (status !== 'active') continue;
    const open = tasks.filter((task) => task.pipeline === pipeline && (task.status === 'pending' || task.status === 'in_progress'));
    if (open.length > 0 && open.every(still)) stuck.push({ pipeline, waiting: open });
    if (open.length > 0 || unread.length === 0) continue;
    const last = Math.max(...tasks.filter((task) => task.pipeline === pipeline).map((task) => task.id));
    if (unread.some((file) => mayFollow(file, pipeline, last))) stuck.push({ pipeline, waiting: [] });
  }
  return stuck;
}

/** Waits until pipeline `id` is approved or failed, or `signal` aborts: re-read on each event that may have moved it. */
export async function waitForPipeline(session: Pick<LeadApi, 'stateOf' | 'subscribe'>, id: number, signal?: AbortSignal): Promise<PipelineState> {
  // One signal often stops a wait per pipeline (`run` with many requirements): each adds a listener.
  if (signal) setMaxListeners(0, signal);
  for (;;) {
    const state = session.stateOf(id);
    if (state.status !== 'active' || signal?.aborted) return state;
    await new Promise<void>((resolve) => {
      const done = () => {
        unsubscribe();
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const unsubscribe = session.subscribe((event) => {
        if (event.type === 'pipeline' || event.type === 'board' || event.type === 'teammate_exit') done();
      });
      signal?.addEventListener('abort', done, { once: true });
    });
  }
}
