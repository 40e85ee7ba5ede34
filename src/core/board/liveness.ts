import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { AutoteamError, BoardFileError } from '../errors.js';
import { type DocStore, FileDocStore } from './docs.js';
import { pidAlive } from './pid.js';

/**
 * Who is alive on a board. A process on this host is alive while its pid is; anything (here or on
 * another host sharing the directory) is dead once its heartbeat is older than `STALE_AFTER` beats.
 */
export const HEARTBEAT_MS = 5_000;
export const STALE_AFTER = 3;

export const HOST = os.hostname();

export { pidAlive };

export interface Heartbeat {
  pid: number | null;
  host?: string | undefined;
  heartbeat?: string | undefined;
}

/**
 * Why a holder of `beat` is gone, or null while it is alive. `floorMs`: heartbeats could not be
 * written before then (the board was unreachable), so silence is counted from it at the earliest.
 */
export function goneReason(beat: Heartbeat, nowMs: number, heartbeatMs = HEARTBEAT_MS, floorMs = 0): string | null {
  const host = beat.host ?? HOST;
  if (host === HOST && beat.pid !== null && !pidAlive(beat.pid)) return `pid ${beat.pid} is not running`;
  if (beat.heartbeat) {
    const age = nowMs - Math.max(Date.parse(beat.heartbeat), floorMs);
    // Long gone (a lease left days ago): when it last beat, not a count of seconds nobody reads.
    if (age > STALE_AFTER * heartbeatMs) return age < 3_600_000 ? `no heartbeat for ${Math.round(age / 1000)} s` : `no heartbeat since ${beat.heartbeat}`;
  }
  return null;
}

const LeadRecordSchema = z.object({
  pid: z.number().int(),
  host: z.string(),
  session: z.string(),
  startedAt: z.string(),
  heartbeat: z.string(),
  /** False: the lead was started with --no-worktree, and `post` beside it posts as it does (workspace/<n>). */
  worktrees: z.boolean().optional(),
});
export type LeadRecord = z.infer<typeof LeadRecordSchema>;

/** A second lead on a live board: one line, naming the holder and how to join instead. */
export class BoardBusyError extends AutoteamError {
  constructor(
    readonly rootDir: string,
    readonly holder: LeadRecord,
  ) {
    const where = `${/^postgres(ql)?:\/\//i.test(rootDir) ? '--board' : '--dir'} ${rootDir}`;
    super(
      `the board in ${rootDir} already has a live lead (pid ${holder.pid} on ${holder.host}, since ${holder.startedAt}); ` +
        `give it a requirement with: autoteam post ${where} "<requirement>"; join its team with: autoteam worker ${where} --role <role>`,
      'BOARD_BUSY',
    );
  }
}

/**
 * The lead's lease on a board (`.team/lead.json`): one live lead per board. Taken under a lock,
 * renewed by a heartbeat while the session runs, released when it closes; a stale one (dead pid on
 * this host, or a heartbeat older than three beats) is taken over.
 */
export class LeadLease {
  private timer: NodeJS.Timeout | null = null;
  private record: LeadRecord | null = null;
  private readonly docs: DocStore;

  constructor(
    readonly rootDir: string,
    private readonly options: { now?: () => Date; heartbeatMs?: number; docs?: DocStore; where?: string } = {},
  ) {
    this.docs = options.docs ?? new FileDocStore(rootDir);
  }

  /** Where the lease is kept (a file path, or the board's URL and key). */
  get file(): string {
    return this.docs.describe('lead');
  }

  private now(): Date {
    return this.options.now?.() ?? new Date();
  }

  read(): LeadRecord | null {
    try {
      return this.docs.read('lead', LeadRecordSchema) ?? null;
    } catch {
      return null; // an unreadable lease holds nothing
    }
  }

  /** Takes the lease; returns the stale holder it took over (with why), or throws BoardBusyError. */
  async acquire(how: Pick<LeadRecord, 'worktrees'> = {}): Promise<{ from: LeadRecord; why: string } | null> {
    const at = this.now().toISOString();
    const mine: LeadRecord = { pid: process.pid, host: HOST, session: `${process.pid}-${Date.now().toString(36)}`, startedAt: at, heartbeat: at, ...how };
    // A lease that is no lease (a hand edit: writes are atomic) may still be a live lead's, which
    // writes it again at its next heartbeat: not taken over, or two leads would share the board.
    const unread = `a live lead writes it again within ${Math.ceil((this.heartbeatMs * 3) / 1000)} s; if no lead runs on this board, delete it and start again`;
    const tookOver = await this.docs.change('lead', (raw) => {
      const parsed = LeadRecordSchema.safeParse(raw);
      if (raw !== undefined && !parsed.success) throw new BoardFileError(this.file, `is not a lead's lease; ${unread}`);
      const current = parsed.success ? parsed.data : null;
      let previous: { from: LeadRecord; why: string } | null = null;
      if (current && !(current.host === HOST && current.pid === process.pid)) {
        const why = goneReason(current, this.now().getTime(), this.heartbeatMs);
        if (why === null) throw new BoardBusyError(this.options.where ?? path.resolve(this.rootDir), current);
        previous = { from: current, why };
      }
      return { write: mine, result: previous };
    }).catch((error: unknown) => {
      // Not valid JSON: said by the store, with what to do added.
      if (error instanceof BoardFileError && !error.message.includes(unread)) throw new BoardFileError(error.path, `${error.message.slice(error.path.length + 2)}; ${unread}`);
      throw error;
    });
    this.record = mine;
    this.timer = setInterval(() => void this.beat().catch(() => undefined), this.heartbeatMs);
    this.timer.unref();
    return tookOver;
  }

  /** Gives the lease up, if it is still ours. */
  async release(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const mine = this.record;
    this.record = null;
    if (!mine) return;
    await this.docs
      .change('lead', (raw) => ({ write: LeadRecordSchema.safeParse(raw).data?.session === mine.session ? null : undefined, result: undefined }), { overwriteInvalid: true })
      .catch(() => undefined);
  }

  private get heartbeatMs(): number {
    return this.options.heartbeatMs ?? HEARTBEAT_MS;
  }

  private async beat(): Promise<void> {
    const mine = this.record;
    if (!mine) return;
    await this.docs.change('lead', (raw) => {
      const current = LeadRecordSchema.safeParse(raw).data;
      // Taken over meanwhile (we were frozen past the stale limit): do not write over the new lead.
      if (current && current.session !== mine.session) return { result: undefined };
      return { write: { ...mine, heartbeat: this.now().toISOString() }, result: undefined };
    }, { overwriteInvalid: true, quiet: true });
  }
}
