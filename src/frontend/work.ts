import type { Task } from '../core/board/schemas.js';
import type { LeadApi } from '../core/lead/lead-api.js';

export { type PipelineStatus, pipelineStatuses } from '../core/stages/pipeline-status.js';

/** Waits (bounded) until LeadApi.busyReason says nothing can still move. Returns what was still busy on timeout. */
export async function waitForQuiet(
  session: LeadApi,
  timeoutMs: number,
  onWait?: (reason: string) => void,
  signal?: AbortSignal,
): Promise<string | null> {
  const deadline = Date.now() + timeoutMs;
  let said = false;
  for (;;) {
    const reason = session.busyReason();
    if (!reason) {
      // Quiet on the board: what the log says of it is shown before anyone says so. What it holds
      // may start more (an approval read from it sets autoMerge's queue to work): quiet after that too.
      await session.catchUp();
      if (!session.busyReason()) return null;
      continue;
    }
    if (!said) onWait?.(reason);
    said = true;
    const left = deadline - Date.now();
    if (left <= 0 || signal?.aborted) return reason;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, Math.min(left, 1_000));
      const unsubscribe = session.subscribe((event) => {
        if (event.type === 'pipeline' || event.type === 'board' || event.type === 'teammate_exit' || event.type === 'question' || event.type === 'answered') done();
      });
      function done() {
        clearTimeout(timer);
        unsubscribe();
        signal?.removeEventListener('abort', done);
        resolve();
      }
      signal?.addEventListener('abort', done, { once: true });
    });
  }
}

/**
 * The pipelines still active once nothing here can move them, as one line, or null: what each waits
 * for, and who goes on with it (the board keeps them). Said when line mode's input ended.
 */
/** `task #4 waits for a teammate of role engineer`: a pending task nobody takes, as a left-open line says it. */
export function waitsFor(task: Pick<Task, 'id' | 'role'>): string {
  return `task #${task.id} waits for ${task.role ? `a teammate of role ${task.role}` : 'any teammate'}`;
}

export function leftOpenLine(session: Pick<LeadApi, 'snapshot' | 'fatalModelError'>): string | null {
  const { pipelines, tasks, board } = session.snapshot();
  const open = pipelines.filter((pipeline) => pipeline.status === 'active');
  if (open.length === 0) return null;
  // The team stopped on a model error: its roles are there, the model is not.
  const fatal = session.fatalModelError();
  if (fatal) return `left open: pipeline ${open.map(({ id }) => `#${id}`).join(', ')}; the team stopped on a model error no retry fixes (${fatal.code}): once it is mended, a lead here goes on with it`;
  const pending = new Map(open.map(({ id }) => [id, tasks.filter((task) => task.pipeline === id && task.status === 'pending')]));
  // Nothing pending, and a task file after its last task that does not read: it may hold the next stage, which no repair posts over.
  const lastOf = (id: number) => Math.max(...tasks.filter((task) => task.pipeline === id).map((task) => task.id));
  const unreadAfter = (id: number) => (pending.get(id)!.length ? undefined : board.problems.find((problem) => Number(/task_(\d+)\.json/.exec(problem)?.[1] ?? 0) > lastOf(id)));
  const unread = open.map(({ id }) => ({ id, problem: unreadAfter(id) }));
  if (unread.every(({ problem }) => problem)) {
    const several = unread.length > 1;
    return `left open: ${unread.map(({ id, problem }) => `pipeline #${id}, whose next stage may be in a task file that does not read (${problem})`).join('; ')}: mend or remove ${several ? 'those files' : 'the file'}, and a lead here goes on with ${several ? 'them' : 'it'}`;
  }
  const waits = [...pending].map(([id, next]) => `#${id}${next.length ? ` (${next.map(waitsFor).join(', ')})` : ''}`);
  const roles = [...new Set([...pending.values()].flat().flatMap((task) => (task.role ? [task.role] : [])))];
  const who = roles.length === 1 ? `/spawn <name> ${roles[0]} in a lead here, or autoteam worker --role ${roles[0]},` : 'a lead or a worker here';
  const them = open.length > 1 ? 'them' : 'it';
  return `left open: pipeline ${waits.join(', ')}; nobody in this session takes ${them} on: ${who} goes on with ${them}`;
}
