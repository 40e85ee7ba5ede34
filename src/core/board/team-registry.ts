import path from 'node:path';
import type { z } from 'zod';
import { BoardFileError, ConfigError, NotFoundError } from '../errors.js';
import { goneReason, HEARTBEAT_MS, type Heartbeat, HOST } from './liveness.js';
import { pidAlive } from './pid.js';
import { type ChangeOptions, type DocStore, FileDocStore } from './docs.js';
import { DEFAULT_LOCK_STALE_MS } from './lock.js';
import { ANY_ROLE } from './task-checks.js';
import { describeZodError, type Member, MemberSchema, type MemberState, type MemberStatus, type TeamConfig, TeamConfigSchema } from './schemas.js';

export interface TeamRegistryOptions {
  now?: () => Date;
  lockStaleMs?: number;
  /** Where the config lives (default: `.team/config.json` under the board root). */
  docs?: DocStore;
  /** The team's name when the config is created (default: the board directory's name). */
  team?: string;
}

export interface MemberUpdate {
  status?: MemberStatus;
  task?: number | null;
  pid?: number | null;
  reason?: string;
}

/** The lead's name on a team whose config does not name another. */
export const DEFAULT_LEAD = 'lead';

/** A member whose record says it is running (working, idle or waiting; or starting, as a lead shows it), whether or not it still is. */
export function isLive(member: { status: MemberState }): boolean {
  return member.status === 'working' || member.status === 'idle' || member.status === 'waiting' || member.status === 'starting';
}

/** A member whose record says it is running and whose process is not found gone (goneReason): it runs now. */
export function runsNow(member: { status: MemberState } & Heartbeat, nowMs = Date.now()): boolean {
  return isLive(member) && goneReason(member, nowMs) === null;
}

/** Whether a live member of the team — a thread of a lead, or an `autoteam worker` — can claim `role`'s tasks. */
export function roleCovered(members: ReadonlyArray<{ role: string; status: MemberState } & Heartbeat>, role: string, nowMs = Date.now()): boolean {
  return members.some((member) => (member.role === role || member.role === ANY_ROLE) && runsNow(member, nowMs));
}

/** `roleCovered` on the team as `registry` reads it when asked; false when it cannot be read (said where a session starts). */
export function coveredOn(registry: { members(): Member[] }): (role: string) => boolean {
  return (role) => {
    try {
      return roleCovered(registry.members(), role);
    } catch {
      return false;
    }
  };
}

/** `.team/config.json`: the team's name, its lead and its members, changed only under a lock. */
export class TeamRegistry {
  readonly docs: DocStore;
  private readonly now: () => Date;
  private readonly defaultTeam: string | undefined;

  constructor(readonly rootDir: string, options: TeamRegistryOptions = {}) {
    this.now = options.now ?? (() => new Date());
    this.defaultTeam = options.team;
    this.docs = options.docs ?? new FileDocStore(rootDir, options.lockStaleMs ?? DEFAULT_LOCK_STALE_MS);
  }

  /** Where the config is (a file path, or the board's URL and key). */
  get file(): string {
    return this.docs.describe('config');
  }

  exists(): boolean {
    return this.docs.keys('').includes('config');
  }

  /** The config as stored; a missing one is an empty team named after the board directory. */
  read(): TeamConfig {
    try {
      this.lastGood = this.docs.read('config', TeamConfigSchema) ?? this.empty();
      return this.lastGood;
    } catch (error) {
      throw withRecoveryHint(error);
    }
  }

  private lastGood: TeamConfig | null = null;

  /**
   * The config for what is shown (a panel, a snapshot, whose question waits): as last read well when
   * a hand edit broke the file while this process runs — the board's watcher says that, once — and
   * it throws only when it never read well. Panels refreshed from timers threw at every refresh.
   */
  shown(): TeamConfig {
    try {
      return this.read();
    } catch (error) {
      if (this.lastGood) return this.lastGood;
      throw error;
    }
  }

  private empty(): TeamConfig {
    return { team: this.defaultTeam ?? (path.basename(path.resolve(this.rootDir)) || 'team'), lead: DEFAULT_LEAD, members: [] };
  }

  /** Creates the config if missing (keeping an existing team's name). */
  async ensure(team?: string, lead = DEFAULT_LEAD): Promise<TeamConfig> {
    return this.change((config, existed) => (existed ? config : { ...config, team: team ?? config.team, lead }));
  }

  members(): Member[] {
    return this.read().members;
  }

  /** Everyone who can receive a message: the lead and every member. */
  names(): string[] {
    const config = this.read();
    return [config.lead, ...config.members.map((member) => member.name)];
  }

  get(name: string): Member | undefined {
    return this.members().find((member) => member.name === name);
  }

  /**
   * Adds a member, or resets an existing one (same name) to the given role and status. A name held by
   * a live member of another process is refused: two teammates must not share an inbox.
   */
  async join(name: string, role: string, update: MemberUpdate = {}): Promise<Member> {
    const at = this.now().toISOString();
    const member = MemberSchema.safeParse({
      name,
      role,
      status: update.status ?? 'idle',
      task: update.task ?? null,
      since: at,
      pid: update.pid ?? process.pid,
      host: HOST,
      heartbeat: at,
    });
    if (!member.success) throw invalidName(name, member.error);
    const config = await this.change((current) => {
      this.checkNameFree(current, name, member.data.pid);
      return { ...current, members: [...current.members.filter((m) => m.name !== name), member.data] };
    });
    return config.members.find((m) => m.name === name)!;
  }

  /**
   * Refuses a name another process may not take: the lead's, or one a live member of another process
   * holds (two teammates must not share an inbox), or one that differs from the lead's or a running
   * member's only in case (on a case-insensitive disk, as macOS's is, their inbox files would be one
   * file), or from one of `also` (those the caller started that may not have joined yet). A member
   * shut down or dead does not hold its name's other cases. `pid` is the process that would take it.
   */
  checkNameFree(config: TeamConfig, name: string, pid: number | null = process.pid, also: Iterable<string> = []): void {
    if (name === config.lead) throw new ConfigError(`'${name}' is the team lead's name`);
    const running = config.members.filter((m) => runsNow(m, this.now().getTime()));
    const twin = [config.lead, ...running.map((m) => m.name), ...also].find((other) => other !== name && other.toLowerCase() === name.toLowerCase());
    if (twin) throw new ConfigError(`'${name}' differs from '${twin}' of team '${config.team}' only in case; names must differ in more than case (a case-insensitive disk, as macOS's, keeps one inbox file for both); choose another name`);
    const existing = config.members.find((m) => m.name === name);
    const live = existing && existing.status !== 'shutdown' && existing.status !== 'dead' && !sameProcess(existing, pid);
    if (live && goneReason(existing, this.now().getTime()) === null) {
      throw new ConfigError(`'${name}' is already a live member of team '${config.team}' (pid ${existing.pid} on ${existing.host ?? HOST}); choose another name`);
    }
  }

  /**
   * The first of `role`, `role-2`, `role-3`, … that process `pid` may take (checkNameFree) and that no
   * live process still holds: the name of an `autoteam worker` started without `--name`. A lead's
   * teammate resting (idled out, `shutdown`, started again when there is work) keeps its name, as does
   * one of a process this host cannot see. Two started at the same moment may pick one name; the
   * second is then refused by `join`, as a name given twice is.
   */
  freeName(role: string, pid: number | null = process.pid): string {
    const config = this.read();
    const held = (name: string) => {
      const member = config.members.find((m) => m.name === name);
      if (!member || member.status === 'dead' || member.pid === pid) return false;
      return member.status !== 'shutdown' || member.host !== HOST || (member.pid !== null && pidAlive(member.pid));
    };
    for (let n = 1; ; n++) {
      const name = n === 1 ? role : `${role}-${n}`;
      try {
        this.checkNameFree(config, name, pid);
        if (!held(name)) return name;
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
      }
    }
  }

  /**
   * A sign of life from `name` (its process is alive and its loop turns). A member missing from the
   * config (deleted or rewritten by hand) is listed again as `fallback`, so its name stays taken.
   */
  async heartbeat(name: string, fallback?: Omit<Member, 'since' | 'heartbeat' | 'host'>): Promise<void> {
    const at = this.now().toISOString();
    // Quiet: a dozen teammates beating every 5 s would otherwise make every process re-read the
    // config a few times a second. Readers see the beat on their next poll, far inside STALE_AFTER.
    await this.change((current) => {
      if (!current.members.some((m) => m.name === name)) {
        return fallback ? { ...current, members: [...current.members, { ...fallback, since: at, heartbeat: at, host: HOST }] } : current;
      }
      return { ...current, members: current.members.map((m) => (m.name === name ? { ...m, heartbeat: at, host: HOST } : m)) };
    }, { quiet: true });
  }

  /**
   * Marks every member whose process is gone `dead` (a pid that is not running on this host, or a
   * heartbeat older than three beats) and returns them, so their tasks can be handed back.
   * `unreachableUntil`: the board could not be written until then (a database outage), so no
   * heartbeat could be either; silence is counted from then at the earliest. `spared`: members whose
   * liveness the caller knows better (the threads it runs itself).
   */
  async reapDead(unreachableUntil = 0, spared: (member: Member) => boolean = () => false): Promise<Array<{ member: Member; why: string }>> {
    const found: Array<{ member: Member; why: string }> = [];
    const nowMs = this.now().getTime();
    const live = (m: Member) => isLive(m) && !spared(m);
    const gone = (m: Member) => goneReason(m, nowMs, HEARTBEAT_MS, unreachableUntil);
    if (!this.read().members.some((m) => live(m) && gone(m) !== null)) return found;
    await this.change((current) => {
      // Decided on the config as written: a change may be tried on a copy first (DocStore.change).
      found.length = 0;
      return {
        ...current,
        members: current.members.map((m) => {
          const why = live(m) ? gone(m) : null;
          if (why === null) return m;
          const dead: Member = { ...m, status: 'dead', since: this.now().toISOString(), reason: why };
          found.push({ member: dead, why });
          return dead;
        }),
      };
    });
    return found;
  }

  async setStatus(name: string, status: MemberStatus, update: Omit<MemberUpdate, 'status'> = {}): Promise<Member> {
    return this.updateMember(name, { ...update, status });
  }

  /** Member updates not written yet: the next write of the config takes them all (updateMember). */
  private queued: Array<{ name: string; update: MemberUpdate; settle: (result: Member | Error) => void }> = [];
  /** A write of queued updates is due or under way: the next waits for it, so batches land in order. */
  private writing = false;

  /**
   * Changes one member's record. Updates are written on the next turn of the event loop, together
   * with every other made before it — the teammates that share a thread (and so this registry)
   * change status in bursts, and each write is a lock, a read and a new file — and one made while
   * that write waits for the lock goes in the write after it, which starts once it has landed. Each
   * settles with its own member's record once written, or with an error of its own (a name the
   * config does not list, a record the schema refuses), in order, member by member. Off the
   * caller's path: a claim that posts `working` goes on to its prompt and its request without
   * waiting for the write.
   */
  updateMember(name: string, update: MemberUpdate): Promise<Member> {
    return new Promise((resolve, reject) => {
      this.queued.push({ name, update, settle: (result) => (result instanceof Error ? reject(result) : resolve(result)) });
      this.writeSoon();
    });
  }

  private writeSoon(): void {
    if (this.writing || this.queued.length === 0) return;
    this.writing = true;
    setImmediate(() => {
      void this.writeQueued().finally(() => {
        this.writing = false;
        this.writeSoon();
      });
    });
  }

  private async writeQueued(): Promise<void> {
    const batch = this.queued.splice(0);
    const results = new Map<number, Member | Error>();
    try {
      await this.change((config) => {
        // Decided on the config as written: a change may be tried on a copy first (DocStore.change).
        results.clear();
        let current = config;
        for (const [i, { name, update }] of batch.entries()) {
          const existing = current.members.find((m) => m.name === name);
          if (!existing) {
            results.set(i, new NotFoundError(`'${name}' is not a member of team '${current.team}'`));
            continue;
          }
          const next = MemberSchema.safeParse(this.updated(existing, update));
          if (!next.success) {
            results.set(i, new ConfigError(`member '${name}': ${describeZodError(next.error)}`));
            continue;
          }
          results.set(i, next.data);
          current = { ...current, members: current.members.map((m) => (m.name === name ? next.data : m)) };
        }
        // No member changed (every name unknown, every record refused): nothing is written.
        return current === config ? null : current;
      });
    } catch (error) {
      for (const { settle } of batch) settle(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    for (const [i, { settle }] of batch.entries()) settle(results.get(i)!);
  }

  private updated(existing: Member, update: MemberUpdate): Member {
    const next: Member = {
      ...existing,
      ...(update.status !== undefined ? { status: update.status } : {}),
      ...(update.task !== undefined ? { task: update.task } : {}),
      ...(update.pid !== undefined ? { pid: update.pid } : {}),
      since: update.status !== undefined && update.status !== existing.status ? this.now().toISOString() : existing.since,
      heartbeat: this.now().toISOString(),
    };
    if (update.reason !== undefined) next.reason = update.reason;
    else if (update.status !== undefined) delete next.reason;
    return next;
  }

  /** Reads the config, applies `fn` and writes what it returns under the config's lock; `null` writes nothing. */
  private async change(fn: (config: TeamConfig, existed: boolean) => TeamConfig | null, options: ChangeOptions = {}): Promise<TeamConfig> {
    return this.docs.change('config', (raw) => {
      const parsed = raw === undefined ? null : TeamConfigSchema.safeParse(raw);
      // A config that does not validate (a bad hand edit) is reported, never written over.
      if (parsed && !parsed.success) throw new BoardFileError(this.file, describeZodError(parsed.error));
      const current = parsed?.success ? parsed.data : this.empty();
      const changed = fn(current, parsed !== null);
      if (changed === null) return { result: current };
      const next = TeamConfigSchema.parse(changed);
      return { write: next, result: next };
    }, options).catch((error: unknown) => {
      throw withRecoveryHint(error);
    });
  }
}

/** A broken team config stops the team: the message says how to get going again. */
function withRecoveryHint(error: unknown): unknown {
  if (!(error instanceof BoardFileError) || error.message.includes(RECOVERY)) return error;
  return new BoardFileError(error.path, `${error.message.slice(error.path.length + 2)}; ${RECOVERY}`);
}

const RECOVERY = 'fix it, or delete it and a new one is written (members are listed again as they join)';

/** Refuses a name no member may have (letters, digits, _ and -, 64 at most), before anything is opened or written. */
export function checkMemberName(name: string): void {
  const checked = MemberSchema.pick({ name: true }).safeParse({ name });
  if (!checked.success) throw invalidName(name, checked.error);
}

function invalidName(name: string, error: z.ZodError): ConfigError {
  return new ConfigError(`invalid teammate name '${name.length > 80 ? `${name.slice(0, 80)}…` : name}': ${describeZodError(error)}`);
}

/** Whether `member` is process `pid` of this host: a pid alone names nothing on another host (containers run theirs as pid 1). */
export function sameProcess(member: Pick<Member, 'pid' | 'host'>, pid: number | null = process.pid): boolean {
  return member.pid === pid && (member.host ?? HOST) === HOST;
}
