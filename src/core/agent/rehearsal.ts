import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { taskPrompt } from '../stages/handoff.js';
import { fileBoard } from '../board/board.js';

/**
 * How long a thread sits idle before it rehearses: a team given work at once (`run`, a test) warms
 * its code on that work instead, and spends nothing on a rehearsal.
 */
export const REHEARSAL_DELAY_MS = 100;

/** This thread's rehearsal (module state is a thread's own): one a thread, however many teammates it runs. */
let rehearsed: Promise<boolean> | null = null;
/** A teammate of the thread has worked a task: its code is warm, and a rehearsal would only spend. */
let warm = false;

/**
 * The first claim, write and hand-over a thread makes cost it ten times the next ones: V8 compiles
 * each function on its first call, zod builds each schema's parser on its first parse, and a
 * thread compiles all of that for itself. Measured on the file board: ~30 ms from a teammate's wake
 * to its claim written, and ~8 ms more to its first request, against ~3 ms warm. A pipeline pays
 * that once for each stage's thread, and a burst of first pipelines pays it while the others wait.
 *
 * So an idle thread rehearses once, on a scratch board of its own in the system's temp folder: posts
 * a task, claims it, records on it, completes it and hands it over, reads the prompt of what it
 * posted; then removes the board. Nothing of it reaches the real board, its log or its events; a
 * rehearsal that fails (no temp folder to write) costs nothing but the warm-up. Resolves whether it
 * went through, hand-over and all.
 */
export function rehearseBoardCode(name: string, role: string): Promise<boolean> {
  if (warm) return Promise.resolve(false);
  rehearsed ??= rehearse(name, role).catch(() => false);
  return rehearsed;
}

/** The thread's rehearsal, once begun. */
export function rehearsal(): Promise<boolean> | null {
  return rehearsed;
}

/**
 * Told the statuses of a thread's teammates: an idle one schedules the thread's rehearsal
 * (REHEARSAL_DELAY_MS later), any other status puts it off, and a task claimed cancels it for good.
 */
export function rehearsalOnIdle(name: string, role: string, delayMs = REHEARSAL_DELAY_MS): (status: string, task: number | null) => void {
  let timer: NodeJS.Timeout | null = null;
  return (status, task) => {
    if (status === 'working' && task !== null) warm = true;
    // Any other status (work, a wait, a shutdown) puts it off until a teammate is idle again.
    if (status !== 'idle') {
      if (timer) clearTimeout(timer);
      timer = null;
    } else if (!warm && !rehearsed && !timer) {
      timer = setTimeout(() => {
        timer = null;
        void rehearseBoardCode(name, role);
      }, delayMs);
      timer.unref();
    }
  };
}

async function rehearse(name: string, role: string): Promise<boolean> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-rehearsal-'));
  const board = fileBoard(dir);
  try {
    const pipeline = await board.tasks.nextPipelineId();
    const posted = await board.tasks.create({ subject: 'A rehearsal', description: 'The claim path, once, on a scratch board.', role, pipeline, by: 'lead', artifacts: { requirement: 'A rehearsal' } });
    const claim = await board.tasks.claimNext(name, role);
    if (!claim?.ok) return false;
    const fence = { owner: name, token: claim.task.claims };
    taskPrompt(claim.task);
    await board.tasks.update(posted.id, { artifacts: (current) => ({ ...current, signal: 'rehearsal' }) }, { fence, by: name, event: 'recorded' });
    const done = await board.tasks.completeThenPost(posted.id, fence, 'rehearsed', { final: false }, {
      follow: async (task) => ({ input: { subject: 'The next stage', role, pipeline, handoff: 'handed over', by: name, artifacts: { requirement: 'A rehearsal', from: task.id } }, after: { pipeline, task: task.id } }),
    });
    if (done.posted) taskPrompt(done.posted.task);
    return done.posted?.created === true;
  } finally {
    // Its events written before the folder goes: none is left to land in a folder removed under it.
    await board.close().catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
