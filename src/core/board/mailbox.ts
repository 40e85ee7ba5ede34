import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { AutoteamError, BoardFileError, InboxFullError, UnknownRecipientError } from '../errors.js';
import { formatBytes, formatLimit } from '../sizes.js';
import { advanceAside, appendWhole, type AsideFile, countLines, fromLessonLine, type InboxLine, parseAside, readLines } from './inbox-file.js';
import { DEFAULT_LOCK_STALE_MS, withLock } from './lock.js';
import { describeZodError, type Message, MessageSchema, type MessageType } from './schemas.js';
import { TeamRegistry } from './team-registry.js';
import { redact, secretValues } from '../trace/redact.js';

export interface MailboxOptions {
  now?: () => Date;
  generateId?: () => string;
  /** The team registry recipients are checked against (default: the file one under `rootDir`). */
  registry?: TeamRegistry;
  lockStaleMs?: number;
  /** A bad inbox line is reported here, kept in `<name>.rejected.jsonl`, and skipped. */
  onProblem?: (problem: { path: string; message: string }) => void;
  /** Aside files older than this are taken to be left by a drainer that died mid-drain. */
  orphanAfterMs?: number;
  /** An inbox holding this much refuses more messages (MAX_INBOX_MB; default 16 MB). */
  maxInboxBytes?: number;
  /** What one drain reads of an inbox at most (whole lines, at least one; default 1 MB). */
  batchBytes?: number;
  /** Fields added to every message sent through this mailbox (a teammate thread's origin, agent/event-order.ts). */
  stamp?: () => Record<string, unknown>;
  /**
   * Awaited before a message is stored: the board passes its event sink's flush, so the events a
   * sender emitted before a message are in the log before anyone can act on the message (an answer
   * is never logged before its question).
   */
  before?: () => Promise<void>;
  /** False where the inboxes are not files under `rootDir` (a PostgreSQL board's rows): no folder is made for them. */
  files?: boolean;
}

/** Lines of an inbox that could not be read: where they went, how many, and the first few with why. */
export interface RejectedLines {
  /** The inbox (its member's name). */
  inbox: string;
  /** Where they were moved (the file beside the inbox, or the PostgreSQL board's `<name>.rejected`). */
  movedTo: string;
  count: number;
  /** The first few: `line 3` (or `message 812` on PostgreSQL) and why it could not be read. */
  lines: Array<{ at: string; problem: string }>;
}

/** Two reports of the same inbox's unreadable lines as one (the first few kept with their reason). */
export function mergeRejected(a: RejectedLines | null, b: RejectedLines): RejectedLines {
  return a ? { ...a, count: a.count + b.count, lines: [...a.lines, ...b.lines].slice(0, REJECTED_SHOWN) } : b;
}

export const DEFAULT_MAX_INBOX_BYTES = 16 * 1024 * 1024;
export const DRAIN_BATCH_BYTES = 1024 * 1024;
const NAME = /^[A-Za-z0-9_-]+$/;
const SEEN_LIMIT = 10_000;
/** Rejected lines kept with their reason until shown; the count goes on past it. */
const REJECTED_SHOWN = 20;
/** Batches one drain may read when they hold only unreadable lines, before it returns nothing. */
const EMPTY_BATCHES = 8;

/**
 * JSONL inboxes in `<root>/.team/inbox`. Send appends one line under the inbox lock, refused once the
 * inbox holds `maxInboxBytes`. Drain moves the file aside under the same lock and reads it after
 * releasing, so a message appended concurrently lands either in the moved file or in a fresh one,
 * never in between; each drain reads one batch of it (see inbox-file.ts), so no inbox is read whole.
 */
export class Mailbox {
  readonly dir: string;
  readonly registry: TeamRegistry;
  private readonly now: () => Date;
  private readonly generateId: () => string;
  private readonly lockStaleMs: number;
  private readonly orphanAfterMs: number;
  private readonly onProblem?: MailboxOptions['onProblem'];
  private readonly stamp?: MailboxOptions['stamp'];
  private readonly before?: MailboxOptions['before'];
  private readonly seen = new Set<string>();
  private readonly secrets = secretValues();
  readonly maxInboxBytes: number;
  private readonly batchBytes: number;
  /** The aside file each inbox is being read from, between drains. */
  private readonly reading = new Map<string, AsideFile>();
  /** When each inbox's folder was last looked through for orphaned aside files. */
  private readonly orphanScans = new Map<string, number>();
  /** Unreadable lines found by this mailbox's drains, per inbox, until takeRejected. */
  private readonly rejected = new Map<string, RejectedLines>();
  /** Lines counted in each rejected-lines file, keyed by its size and mtime. */
  private readonly rejectedCounts = new Map<string, { key: string; count: number }>();

  constructor(readonly rootDir: string, options: MailboxOptions = {}) {
    this.dir = path.join(path.resolve(rootDir), '.team', 'inbox');
    this.registry = options.registry ?? new TeamRegistry(rootDir, { now: options.now, lockStaleMs: options.lockStaleMs });
    this.now = options.now ?? (() => new Date());
    this.generateId = options.generateId ?? randomUUID;
    this.lockStaleMs = options.lockStaleMs ?? DEFAULT_LOCK_STALE_MS;
    this.orphanAfterMs = options.orphanAfterMs ?? 30_000;
    this.onProblem = options.onProblem;
    this.maxInboxBytes = options.maxInboxBytes ?? DEFAULT_MAX_INBOX_BYTES;
    this.batchBytes = options.batchBytes ?? DRAIN_BATCH_BYTES;
    this.stamp = options.stamp;
    this.before = options.before;
    if (options.files !== false) fs.mkdirSync(this.dir, { recursive: true });
  }

  inboxPath(name: string): string {
    if (!NAME.test(name)) throw new AutoteamError(`invalid inbox name '${name}'`, 'INVALID_NAME');
    return path.join(this.dir, `${name}.jsonl`);
  }

  /** Appends one message to `to`'s inbox. `to` must be the lead or a member of the team. */
  async send(
    from: string,
    to: string,
    content: string,
    type: MessageType = 'message',
    extra: Record<string, unknown> = {},
  ): Promise<Message> {
    this.recipient(to);
    return this.append(from, to, content, type, extra);
  }

  /** Throws what a send to `to` would, before anything is written or recorded (an answer asks first). */
  deliverable(to: string): void {
    this.recipient(to);
    this.checkInbox(to);
  }

  /** `to` is the lead or a member of the team (a team config that cannot be read says so). */
  private recipient(to: string): void {
    const config = this.registry.read();
    const names = [config.lead, ...config.members.map((member) => member.name)];
    if (!names.includes(to)) throw new UnknownRecipientError(to, config.team, names);
  }

  /** Whether `to`'s inbox file is there; one that cannot take a line (a folder in its place) throws. */
  protected checkInbox(to: string): boolean {
    const file = this.inboxPath(to);
    const stat = fs.statSync(file, { throwIfNoEntry: false });
    if (stat && !stat.isFile()) throw new BoardFileError(file, `is a ${stat.isDirectory() ? 'folder' : 'special file'}, not an inbox file: messages to ${to} can be neither delivered nor read until it is removed`);
    return stat !== undefined;
  }

  /** Sends to every member and the lead, except the sender. */
  async broadcast(from: string, content: string, extra: Record<string, unknown> = {}): Promise<Message[]> {
    const sent: Message[] = [];
    for (const name of this.registry.names()) {
      if (name !== from) sent.push(await this.append(from, name, content, 'broadcast', extra));
    }
    return sent;
  }

  /**
   * Takes the next batch of `name`'s inbox, oldest first: about `batchBytes` of it (whole lines), so
   * a large inbox is read over several drains, never at once. Empty when nothing is waiting. Each
   * message id is delivered once by this mailbox.
   */
  async drain(name: string): Promise<Message[]> {
    const file = this.inboxPath(name);
    const messages: Message[] = [];
    for (let batch = 0; batch < EMPTY_BATCHES && messages.length === 0; batch++) {
      const aside = await this.nextAside(name, file);
      if (!aside) break;
      messages.push(...this.readBatch(name, aside));
    }
    return messages;
  }

  /** The aside file to read next: the one being read, one a dead drainer left, or the inbox moved aside now. */
  private async nextAside(name: string, file: string): Promise<AsideFile | null> {
    const current = this.reading.get(name);
    if (current && fs.existsSync(current.path)) return current;
    this.reading.delete(name);
    for (const orphan of this.orphans(name)) {
      const taken = this.takeOver(file, orphan);
      if (taken) {
        this.reading.set(name, taken);
        return taken;
      }
    }
    // Nothing to move aside: no lock taken for an empty inbox (a message landing now is read next time).
    // Nor a folder in its place: nobody's messages, and moved aside it would be read (and fail) at every drain.
    if (!this.checkInbox(name)) return null;
    const aside = `${file}.${process.pid}.${randomUUID().slice(0, 8)}.draining`;
    const moved = await withLock(
      file,
      () => {
        try {
          fs.renameSync(file, aside);
          // rename keeps the mtime; the aside file must look fresh or another drainer would take
          // it for one orphaned by a crash.
          const now = new Date();
          fs.utimesSync(aside, now, now);
          return true;
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
          throw error;
        }
      },
      { staleMs: this.lockStaleMs },
    );
    if (!moved) return null;
    const started = { path: aside, offset: 0, line: 0 };
    this.reading.set(name, started);
    return started;
  }

  /** An orphaned aside file renamed to this drainer (its position kept); null when another drainer took it first. */
  private takeOver(file: string, orphan: AsideFile): AsideFile | null {
    const mine = `${file}.${process.pid}.${randomUUID().slice(0, 8)}.draining`;
    try {
      fs.renameSync(orphan.path, mine);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    return advanceAside({ path: mine, offset: 0, line: 0 }, orphan.offset, orphan.line);
  }

  /**
   * One batch of an aside file. Its new position is recorded (in the file's name) before the
   * messages are returned, like the old whole-file drain deleted the file before returning.
   */
  private readBatch(name: string, aside: AsideFile): Message[] {
    let batch: ReturnType<typeof readLines>;
    try {
      batch = readLines(aside, this.batchBytes, this.maxInboxBytes);
    } catch (error) {
      const { code } = error as NodeJS.ErrnoException;
      if (code === 'EISDIR') throw new BoardFileError(aside.path, `is a folder, not an inbox file: messages to ${name} cannot be read until it is removed`);
      if (code !== 'ENOENT') throw error;
      this.reading.delete(name);
      return [];
    }
    if (batch.done) {
      fs.rmSync(aside.path, { force: true });
      this.reading.delete(name);
    } else {
      try {
        this.reading.set(name, advanceAside(aside, batch.end, batch.line));
      } catch (error) {
        // Taken over meanwhile by a drainer that thought this one dead: it goes on from the last position.
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        this.reading.delete(name);
      }
    }
    for (const line of batch.tooLong) this.reject(name, `line ${line}`, `longer than ${formatLimit(this.maxInboxBytes)}; not read or kept`, `${this.inboxPath(name)}:${line}`);
    return this.parse(name, batch.lines, true).filter((message) => {
      if (this.seen.has(message.id)) return false;
      this.seen.add(message.id);
      if (this.seen.size > SEEN_LIMIT) this.seen.delete(this.seen.values().next().value!);
      return true;
    });
  }

  /** Puts drained messages back (as they were, ids kept) so they are not lost when a reader stops. */
  async restore(name: string, messages: readonly Message[]): Promise<void> {
    if (messages.length === 0) return;
    const file = this.inboxPath(name);
    const lines = messages.map((message) => `${redact(JSON.stringify(message), this.secrets)}\n`).join('');
    for (const message of messages) this.seen.delete(message.id);
    await withLock(file, () => appendWhole(file, lines), { staleMs: this.lockStaleMs });
  }

  /** Reads `name`'s inbox without taking anything out. */
  peek(name: string): Message[] {
    const file = this.inboxPath(name);
    if (!fs.existsSync(file)) return [];
    const lines = fs.readFileSync(file, 'utf8').split('\n').map((text, index) => ({ number: index + 1, text }));
    return this.parse(name, lines, false);
  }

  /**
   * The lines of `name`'s inbox this mailbox found unreadable since the last call (moved to the
   * rejected-lines file, each with its line number and why), or null when there were none.
   */
  takeRejected(name: string): RejectedLines | null {
    const found = this.rejected.get(name) ?? null;
    this.rejected.delete(name);
    return found;
  }

  /** How many unreadable lines `name`'s inbox has had moved aside, by any drainer (its rejected-lines file). */
  async rejectedCount(name: string): Promise<number> {
    const file = this.rejectedPath(name);
    const stat = fs.statSync(file, { throwIfNoEntry: false });
    if (!stat) return 0;
    const key = `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
    const known = this.rejectedCounts.get(name);
    if (known?.key === key) return known.count;
    const count = countLines(file);
    this.rejectedCounts.set(name, { key, count });
    return count;
  }

  /** Where unreadable lines of `name`'s inbox go. */
  rejectedPath(name: string): string {
    return path.join(this.dir, `${name}.rejected.jsonl`);
  }

  /** Records an unreadable line of `name`'s inbox (`at` says which, `source` as onProblem reports it), counted for takeRejected. */
  protected reject(name: string, at: string, problem: string, source: string): void {
    this.onProblem?.({ path: source, message: problem });
    const found = this.rejected.get(name) ?? { inbox: name, movedTo: this.rejectedLocation(name), count: 0, lines: [] };
    this.rejected.set(name, { ...found, count: found.count + 1, lines: found.lines.length < REJECTED_SHOWN ? [...found.lines, { at, problem }] : found.lines });
  }

  /** Where rejected lines are shown to be (a path relative to the board's folder on the file board). */
  protected rejectedLocation(name: string): string {
    return path.relative(this.rootDir, this.rejectedPath(name)) || this.rejectedPath(name);
  }

  private async append(
    from: string,
    to: string,
    content: string,
    type: MessageType,
    extra: Record<string, unknown>,
  ): Promise<Message> {
    const candidate = { ...extra, ...this.stamp?.(), id: this.generateId(), type, from, to, content, at: this.now().toISOString() };
    const parsed = MessageSchema.safeParse(candidate);
    if (!parsed.success) {
      throw new AutoteamError(`invalid message to ${to}: ${describeZodError(parsed.error)}`, 'INVALID_MESSAGE');
    }
    this.inboxPath(to); // the name is checked on every backend
    await this.before?.();
    await this.deliver(to, JSON.parse(redact(JSON.stringify(parsed.data), this.secrets)) as Message);
    return parsed.data;
  }

  /**
   * Stores one message (secrets already redacted) at the end of `to`'s inbox; refused with
   * InboxFullError when the inbox would pass `maxInboxBytes`.
   */
  protected async deliver(to: string, message: Message): Promise<void> {
    const file = this.inboxPath(to);
    this.checkInbox(to);
    const line = `${JSON.stringify(message)}\n`;
    const bytes = Buffer.byteLength(line);
    await withLock(
      file,
      () => {
        const size = fs.statSync(file, { throwIfNoEntry: false })?.size ?? 0;
        if (size + bytes > this.maxInboxBytes) {
          throw new InboxFullError(to, `${file} holds ${formatBytes(size)}, this message is ${formatBytes(bytes)}`, formatLimit(this.maxInboxBytes));
        }
        appendWhole(file, line);
      },
      { staleMs: this.lockStaleMs },
    );
  }

  /** Aside files of `name` whose drainer seems gone (not touched for `orphanAfterMs`), oldest first. */
  private orphans(name: string): AsideFile[] {
    // An aside file is an orphan only after `orphanAfterMs` untouched: looking more often than a
    // tenth of that finds nothing sooner, and the folder is read on every drain otherwise.
    const now = Date.now();
    if (now - (this.orphanScans.get(name) ?? Number.NEGATIVE_INFINITY) < this.orphanAfterMs / 10) return [];
    this.orphanScans.set(name, now);
    const prefix = `${name}.jsonl.`;
    const cutoff = now - this.orphanAfterMs;
    return fs
      .readdirSync(this.dir)
      .filter((entry) => entry.startsWith(prefix) && entry.endsWith('.draining'))
      .map((entry) => ({ file: path.join(this.dir, entry), mtime: fs.statSync(path.join(this.dir, entry), { throwIfNoEntry: false })?.mtimeMs ?? Infinity }))
      .filter((entry) => entry.mtime < cutoff)
      .sort((a, b) => a.mtime - b.mtime)
      .flatMap((entry) => parseAside(entry.file) ?? []);
  }

  /** The messages of `lines`; the others are reported and, when `keepRejected`, moved to the rejected-lines file. */
  private parse(name: string, lines: readonly InboxLine[], keepRejected: boolean): Message[] {
    const messages: Message[] = [];
    const kept: string[] = [];
    for (const { number, text } of lines) {
      if (!text.trim()) continue;
      let problem: string;
      try {
        const parsed = MessageSchema.safeParse(fromLessonLine(JSON.parse(text), name, text));
        if (parsed.success) {
          messages.push(parsed.data);
          continue;
        }
        problem = describeZodError(parsed.error);
      } catch (error) {
        problem = `not valid JSON (${(error as Error).message})`;
      }
      if (keepRejected) {
        this.reject(name, `line ${number}`, problem, `${this.inboxPath(name)}:${number}`);
        kept.push(`${text}\n`);
      } else {
        this.onProblem?.({ path: `${this.inboxPath(name)}:${number}`, message: problem });
      }
    }
    if (kept.length) fs.appendFileSync(this.rejectedPath(name), kept.join(''));
    return messages;
  }
}
