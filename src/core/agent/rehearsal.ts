import fs from 'node:fs';
import { fileBoard } from '../board/board.js';
import { scratchDir } from '../exec/scratch.js';
import { taskPrompt } from '../stages/handoff.js';

/**
 * How long a thread's teammates sit idle, no wake among them, before the thread rehearses: a thread
 * given work at once (a test, `run`'s analyst) warms its code on that work instead, and spends
 * nothing on a rehearsal.
 */
export const REHEARSAL_DELAY_MS = 100;

/** This thread's rehearsal once begun (module state is a thread's own): one a thread, however many teammates it runs. */
let begun: Promise<boolean> | null = null;
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
 * posted; then removes the board (a folder a killed process left is swept as other scratch folders
 * are, `sweepScratch`). Nothing of it reaches the real board, its log or its events; a rehearsal that
 * fails (no temp folder to write) costs nothing but the warm-up. Resolves whether it went through,
 * hand-over and all.
 */
export function rehearseBoardCode(name: string, role: string): Promise<boolean> {
  if (warm) return Promise.resolve(false);
  begun ??= rehearse(name, role).catch(() => false);
  return begun;
}

/** The thread's rehearsal, once begun. */
export function rehearsal(): Promise<boolean> | null {
  return begun;
}

/**
 * When a thread rehearses: told its teammates' statuses and wakes. An `idle` schedules the rehearsal
 * REHEARSAL_DELAY_MS later; a wake puts it off (the claim it brings may be under way, before any status
 * says so), any other status cancels it until a teammate is idle again, and a claimed task cancels it
 * for good. Only a file board's threads rehearse: a PostgreSQL board's claim is its SQL, which a
 * scratch file board does not warm (measured: 11.9 against 11.5 ms to a claim).
 */
export class RehearsalTimer {
  private timer: NodeJS.Timeout | null = null;
  private lastWake = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly name: string,
    private readonly role: string,
    private readonly delayMs = REHEARSAL_DELAY_MS,
  ) {}

  status(status: string, task: number | null): void {
    if (status === 'working' && task !== null) warm = true;
    if (status !== 'idle') this.cancel();
    else if (!warm && !begun && !this.timer) this.schedule(this.delayMs);
  }

  woke(): void {
    this.lastWake = performance.now();
  }

  /** No rehearsal begins from now on (the thread is ending). */
  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(ms: number): void {
    const scheduled = performance.now();
    this.timer = setTimeout(() => {
      this.timer = null;
      // Woken meanwhile: its claim may be under way, with no status yet; wait for the quiet again.
      if (this.lastWake >= scheduled) return this.schedule(Math.max(1, this.lastWake + this.delayMs - performance.now()));
      void rehearseBoardCode(this.name, this.role);
    }, ms);
    this.timer.unref();
  }
}

async function rehearse(name: string, role: string): Promise<boolean> {
  const dir = scratchDir('rehearsal');
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
