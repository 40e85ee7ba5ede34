import { pipelineStatuses } from '../core/stages/pipeline.js';
import type { LeadSession } from '../core/lead/session.js';

export { type PipelineStatus, pipelineStatuses } from '../core/stages/pipeline.js';

/**
 * Why the session is still busy, or null when nothing can still move: a pipeline is active and
 * some teammate is alive to move it — unless it waits on a question nobody will answer.
 */
export function workInFlight(session: LeadSession): string | null {
  if (session.manager.handles().length === 0 || session.fatalError) return null;
  const tasks = session.board.list();
  const active = [...pipelineStatuses(tasks)].filter(([, status]) => status === 'active').map(([id]) => id);
  const working = tasks.filter((task) => task.status === 'in_progress');
  if (session.questions.size > 0 && !session.autoAnswer) return null;
  if (active.length) return `pipeline ${active.map((id) => `#${id}`).join(', ')} still active`;
  if (working.length) return `task ${working.map((task) => `#${task.id}`).join(', ')} in progress`;
  // A general task just posted (by the lead's create_task) that a running teammate can claim.
  const roles = new Set(session.manager.handles().map((handle) => handle.role));
  const claimable = [...roles].flatMap((role) => session.board.scanUnclaimed(role)).filter((task) => task.pipeline === null);
  if (claimable.length) return `task ${[...new Set(claimable.map((task) => `#${task.id}`))].join(', ')} waiting to be claimed`;
  return null;
}

/** Waits (bounded) until workInFlight says nothing can still move. Returns what was still busy on timeout. */
export async function waitForQuiet(
  session: LeadSession,
  timeoutMs: number,
  onWait?: (reason: string) => void,
  signal?: AbortSignal,
): Promise<string | null> {
  const deadline = Date.now() + timeoutMs;
  let said = false;
  for (;;) {
    const reason = workInFlight(session);
    if (!reason) return null;
    if (!said) onWait?.(reason);
    said = true;
    const left = deadline - Date.now();
    if (left <= 0 || signal?.aborted) return reason;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, Math.min(left, 1_000));
      function done() {
        clearTimeout(timer);
        session.off('event', onEvent);
        signal?.removeEventListener('abort', done);
        resolve();
      }
      function onEvent(event: { type: string }) {
        if (event.type === 'pipeline' || event.type === 'board' || event.type === 'teammate_exit' || event.type === 'question' || event.type === 'answered') done();
      }
      session.on('event', onEvent);
      signal?.addEventListener('abort', done, { once: true });
    });
  }
}
