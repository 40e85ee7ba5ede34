/** Teammates for tests: in this thread (fake model objects) or in worker threads (TeammateManager). */
import { DEFAULT_LIMITS, Sandbox } from '../../src/core/exec/sandbox.js';
import fs from 'node:fs';
import path from 'node:path';
import type { TeammateSettings } from '../../src/core/agent/settings.js';
import { Teammate, type TeammateEvent } from '../../src/core/agent/teammate.js';
import { TeammateManager } from '../../src/core/agent/manager.js';
import { Wake } from '../../src/core/agent/wake.js';
import type { FromWorker } from '../../src/core/agent/worker-protocol.js';
import { Mailbox, RequestStore, TaskBoard, TeamRegistry } from '../../src/core/board/index.js';
import { BoardWatcher } from '../../src/core/board/watcher.js';
import type { ModelSpec } from '../../src/core/model/factory.js';
import type { ModelClient } from '../../src/core/model/types.js';
import type { ToolContext } from '../../src/core/tools/tool.js';
import { afterEach } from 'vitest';
import { EventLog, removeBoard } from './agent-wait.js';

export const TEAM = 'crew';

/**
 * The IDLE poll of the teammates these helpers start: an hour, past every test's ceiling, so they
 * move only on wake-ups (watcher events, notify) and a test that sees them move proves the wake-up.
 */
export const POLL_NEVER_MS = 3_600_000;

export async function makeTeam(root: string): Promise<{ board: TaskBoard; mailbox: Mailbox; registry: TeamRegistry }> {
  const registry = new TeamRegistry(root);
  await registry.ensure(TEAM);
  return { board: new TaskBoard(root), mailbox: new Mailbox(root), registry };
}

export function identityText(name: string, role: string, team = TEAM): string {
  return `<identity>You are '${name}', role: ${role}, team: ${team}. Continue your work.</identity>`;
}

/** A teammate running in this thread; `wake` and `stop` are the test's to pull. */
export interface LocalTeammate {
  teammate: Teammate;
  wake: Wake;
  events: EventLog<TeammateEvent>;
  /** Resolves with run()'s reason. */
  done: Promise<string>;
  /** Aborts the teammate and waits for run() to return. */
  halt(): Promise<string>;
}

export function startLocalTeammate(options: {
  root: string;
  name: string;
  role: string;
  model: ModelClient;
  settings?: Partial<TeammateSettings>;
  wake?: Wake;
}): LocalTeammate {
  const wake = options.wake ?? new Wake();
  const stop = new AbortController();
  const events = new EventLog<TeammateEvent>();
  const teammate = new Teammate({
    name: options.name,
    role: options.role,
    rootDir: options.root,
    model: options.model,
    wake,
    signal: stop.signal,
    settings: { pollMs: POLL_NEVER_MS, idleTimeoutMs: 0, ...options.settings },
    emit: events.push,
  });
  const done = teammate.run();
  done.catch(() => undefined);
  return {
    teammate,
    wake,
    events,
    done,
    async halt() {
      stop.abort(new Error('test over'));
      return done.catch((error: Error) => `run() failed: ${error.message}`);
    },
  };
}

/** One watcher and one manager, as the REPL runs them, with every worker event logged. */
export class ManagerRig {
  readonly watcher: BoardWatcher;
  readonly manager: TeammateManager;
  readonly events = new EventLog<FromWorker>();

  private constructor(watcher: BoardWatcher, manager: TeammateManager) {
    this.watcher = watcher;
    this.manager = manager;
    manager.on('event', this.events.push);
  }

  /** `cores`: what the manager shares out among threads (TeammateManager.spawnTeam). */
  static async start(root: string, model: ModelSpec, settings: Partial<TeammateSettings> = {}, cores?: number): Promise<ManagerRig> {
    const watcher = new BoardWatcher(root);
    watcher.on('error', () => undefined);
    await watcher.start();
    const manager = new TeammateManager({ rootDir: root, model, watcher, settings: { pollMs: POLL_NEVER_MS, idleTimeoutMs: 0, ...settings }, ...(cores ? { cores } : {}) });
    return new ManagerRig(watcher, manager);
  }

  /** Spawns a teammate and waits until it reports idle (its first scan found nothing). */
  async spawnIdle(name: string, role: string): Promise<ReturnType<TeammateManager['spawn']>> {
    const from = this.events.events.length;
    const handle = this.manager.spawn(name, role);
    await this.events.waitFor((e) => e.type === 'status' && e.name === name && e.status === 'idle', `${name} idle`, { from });
    return handle;
  }

  async close(): Promise<void> {
    await this.manager.close(2_000);
    await this.watcher.close();
  }
}

/** A ToolContext for running the loop by hand over a real board in `root`. */
export function loopContext(root: string, signal: AbortSignal = new AbortController().signal): ToolContext {
  const workspace = path.join(root, 'workspace');
  fs.mkdirSync(workspace, { recursive: true });
  const mailbox = new Mailbox(root);
  return {
    agent: { name: 'eng', role: 'engineer', team: TEAM },
    rootDir: root,
    workspace,
    sandbox: new Sandbox({ workspace, hidden: [root], network: false, limits: DEFAULT_LIMITS }),
    board: new TaskBoard(root),
    requests: new RequestStore(root),
    mailbox,
    registry: mailbox.registry,
    task: null,
    fence: null,
    signal,
    limits: { commandTimeoutMs: 10_000, maxOutputChars: 8_000 },
    async record() {},
    async waitForMessage() {
      return null;
    },
    log() {},
  };
}

/**
 * A test file's (or describe's) local teammate and temp folders: after each test the teammate still
 * running is halted and the folders pushed onto `folders` are removed.
 */
export function localTeammates(): { folders: string[]; start(options: Parameters<typeof startLocalTeammate>[0]): LocalTeammate } {
  const folders: string[] = [];
  let running: LocalTeammate | null = null;
  afterEach(async () => {
    await running?.halt();
    running = null;
    for (const dir of folders.splice(0)) removeBoard(dir);
  });
  return { folders, start: (options) => (running = startLocalTeammate(options)) };
}
