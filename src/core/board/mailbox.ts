import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { AutoteamError, UnknownRecipientError } from '../errors.js';
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
  /** Fields added to every message sent through this mailbox (a teammate thread's origin, agent/event-order.ts). */
  stamp?: () => Record<string, unknown>;
}

const NAME = /^[A-Za-z0-9_-]+$/;
const SEEN_LIMIT = 10_000;

/**
 * JSONL inboxes in `<root>/.team/inbox`. Send appends one line under the inbox lock. Drain moves the
 * file aside under the same lock and reads it after releasing, so a message appended concurrently
 * lands either in the moved file or in a fresh one, never in between.
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
  private readonly seen = new Set<string>();
  private readonly secrets = secretValues();

  constructor(readonly rootDir: string, options: MailboxOptions = {}) {
    this.dir = path.join(path.resolve(rootDir), '.team', 'inbox');
    this.registry = options.registry ?? new TeamRegistry(rootDir, { now: options.now, lockStaleMs: options.lockStaleMs });
    this.now = options.now ?? (() => new Date());
    this.generateId = options.generateId ?? randomUUID;
    this.lockStaleMs = options.lockStaleMs ?? DEFAULT_LOCK_STALE_MS;
    this.orphanAfterMs = options.orphanAfterMs ?? 30_000;
    this.onProblem = options.onProblem;
    this.stamp = options.stamp;
    fs.mkdirSync(this.dir, { recursive: true });
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
    const config = this.registry.read();
    const names = [config.lead, ...config.members.map((member) => member.name)];
    if (!names.includes(to)) throw new UnknownRecipientError(to, config.team, names);
    return this.append(from, to, content, type, extra);
  }

  /** Sends to every member and the lead, except the sender. */
  async broadcast(from: string, content: string, extra: Record<string, unknown> = {}): Promise<Message[]> {
    const sent: Message[] = [];
    for (const name of this.registry.names()) {
      if (name !== from) sent.push(await this.append(from, name, content, 'broadcast', extra));
    }
    return sent;
  }

  /** Takes every message out of `name`'s inbox, oldest first. Each message id is delivered once. */
  async drain(name: string): Promise<Message[]> {
    const file = this.inboxPath(name);
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
    const messages: Message[] = [];
    for (const orphan of this.orphans(name)) messages.push(...this.consume(name, orphan));
    if (moved) messages.push(...this.consume(name, aside));
    return messages;
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
    return this.parse(name, file, fs.readFileSync(file, 'utf8'), false);
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
    await this.deliver(to, JSON.parse(redact(JSON.stringify(parsed.data), this.secrets)) as Message);
    return parsed.data;
  }

  /** Stores one message (secrets already redacted) at the end of `to`'s inbox. */
  protected async deliver(to: string, message: Message): Promise<void> {
    const file = this.inboxPath(to);
    await withLock(file, () => appendWhole(file, `${JSON.stringify(message)}\n`), { staleMs: this.lockStaleMs });
  }

  private orphans(name: string): string[] {
    const prefix = `${name}.jsonl.`;
    const cutoff = Date.now() - this.orphanAfterMs;
    return fs
      .readdirSync(this.dir)
      .filter((entry) => entry.startsWith(prefix) && entry.endsWith('.draining'))
      .map((entry) => path.join(this.dir, entry))
      .filter((file) => (fs.statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? Infinity) < cutoff);
  }

  private consume(name: string, file: string): Message[] {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      return [];
    }
    const messages = this.parse(name, file, text, true);
    fs.rmSync(file, { force: true });
    return messages.filter((message) => {
      if (this.seen.has(message.id)) return false;
      this.seen.add(message.id);
      if (this.seen.size > SEEN_LIMIT) this.seen.delete(this.seen.values().next().value!);
      return true;
    });
  }

  private parse(name: string, _file: string, text: string, keepRejected: boolean): Message[] {
    const messages: Message[] = [];
    const lines = text.split('\n');
    lines.forEach((line, index) => {
      if (!line.trim()) return;
      let problem: string;
      try {
        const parsed = MessageSchema.safeParse(fromLessonLine(JSON.parse(line), name, line));
        if (parsed.success) {
          messages.push(parsed.data);
          return;
        }
        problem = describeZodError(parsed.error);
      } catch (error) {
        problem = `not valid JSON (${(error as Error).message})`;
      }
      this.onProblem?.({ path: `${this.inboxPath(name)}:${index + 1}`, message: problem });
      if (keepRejected) fs.appendFileSync(path.join(this.dir, `${name}.rejected.jsonl`), `${line}\n`);
    });
    return messages;
  }
}

/**
 * An inbox line in the lesson's format (`{type, from, content, timestamp}`, no id or recipient)
 * reads as a full message: the id from the line's hash, the recipient from the inbox, the time from
 * the Unix timestamp.
 */
function fromLessonLine(raw: unknown, inbox: string, line: string): unknown {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return raw;
  const message = { ...(raw as Record<string, unknown>) };
  message.id ??= `line-${createHash('sha256').update(line).digest('hex').slice(0, 16)}`;
  message.to ??= inbox;
  message.type ??= 'message';
  if (message.at === undefined && typeof message.timestamp === 'number') {
    const ms = message.timestamp > 1e12 ? message.timestamp : message.timestamp * 1000;
    message.at = new Date(ms).toISOString();
  }
  return message;
}

/**
 * Appends `text` or nothing: a failed append (a full disk) is cut back to the old length under the
 * caller's lock, so no torn line is left for the next message to be glued to.
 */
function appendWhole(file: string, text: string): void {
  const before = fs.statSync(file, { throwIfNoEntry: false })?.size ?? 0;
  try {
    fs.appendFileSync(file, text);
  } catch (error) {
    try {
      fs.truncateSync(file, before);
    } catch {
      // nothing was created
    }
    throw error;
  }
}
