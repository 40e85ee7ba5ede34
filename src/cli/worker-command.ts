import fs from 'node:fs';
import path from 'node:path';
import { formatDuration, WHO_ANSWERS } from '../frontend/format.js';
import { Teammate } from '../core/agent/teammate.js';
import { MailHint } from '../core/agent/teammate-inbox.js';
import type { TeammateSettings } from '../core/agent/settings.js';
import { Wake } from '../core/agent/wake.js';
import { StageRegistry } from '../core/stages/stage-registry.js';
import { openBoard } from '../core/board/board.js';
import { checkMemberName, DEFAULT_LEAD } from '../core/board/team-registry.js';
import { BoardOutage } from '../core/board/outage.js';
import { modelSpecs, type ProjectConfig } from '../core/config/project-config.js';
import type { ModelOverrides } from '../core/model/config.js';
import { createModel, describeModel } from '../core/model/factory.js';
import { guardProcess } from '../core/agent/crash-log.js';
import { AutoteamError, ConfigError } from '../core/errors.js';
import { attachTelemetry } from '../core/telemetry/attach.js';
import { describeTeamEvent, saysLine } from '../frontend/activity.js';
import { onHangup, onStopSignals } from '../frontend/quit.js';

export interface WorkerCommandOptions {
  dir: string;
  /** Absent: its role, or `role-2`, … when that name is live (TeamRegistry.freeName). */
  name?: string;
  role: string;
  prompt?: string;
  settings: TeammateSettings;
  /** A postgres:// board (absent: the file board in `dir`). */
  board?: string;
  /** --provider / --model. */
  model?: ModelOverrides;
  /** autoteam.config.json of the board folder. */
  project: ProjectConfig;
}

/**
 * Whether there is a board to join (a folder's team config, or a database's schema): on none, the
 * lead will be DEFAULT_LEAD; on one, joining checks the name against its config's lead.
 */
async function boardExists(url: string | undefined, dir: string): Promise<boolean> {
  if (!url) return fs.existsSync(path.join(dir, '.team', 'config.json'));
  const board = await openBoard(url, dir, { create: false }).catch((error: unknown) => {
    if ((error as { code?: string }).code === 'NOT_FOUND') return null;
    throw error;
  });
  await board?.close();
  return board !== null;
}

/** `autoteam worker`: one teammate in the foreground of this process, with its own watcher. */
export async function runWorker(options: WorkerCommandOptions): Promise<number> {
  StageRegistry.from(options.settings.stages).checkRole(options.role);
  // A name the team would refuse leaves nothing behind: checked before the board is opened (or made).
  if (options.name !== undefined) {
    checkMemberName(options.name);
    if (options.name.toLowerCase() === DEFAULT_LEAD && !(await boardExists(options.board, options.dir))) {
      throw new ConfigError(options.name === DEFAULT_LEAD ? `'${options.name}' is the team lead's name` : `'${options.name}' differs from the team lead's name '${DEFAULT_LEAD}' only in case; names must differ in more than case; choose another name`);
    }
  }
  const { model: base, models } = modelSpecs(process.env, options.project, options.model ?? {});
  const spec = models[options.role] ?? base;
  const model = await createModel(spec);
  const wake = new Wake();
  const stop = new AbortController();
  const board = await openBoard(options.board ?? options.dir, options.dir, { maxInboxBytes: options.settings.maxInboxBytes });
  const name = options.name ?? board.registry.freeName(options.role);
  const watcher = board.events();
  watcher.on('board', () => wake.notify());
  const mail = new MailHint();
  watcher.on('inbox', (to) => {
    if (to !== name) return;
    mail.arrived();
    wake.notify();
  });
  // A database that went away fails every poll: each source's first error is shown, then one line when it answers again.
  const outage = new BoardOutage();
  const database = board.location !== options.dir;
  watcher.on('error', (error) => {
    if (!database || outage.report('watcher', error.message)) console.error(`[${name}] watcher: ${error.message}`);
  });
  const stopProbing = outage.probeEvery(() => board.tasks.refresh(), (notice) => console.log(`[${name}] ${notice}`));
  await watcher.start();
  const onSignal = (signal: NodeJS.Signals) => {
    console.log(`[${name}] ${signal}: handing back any task and stopping`);
    stop.abort(new Error(`${signal} received`));
  };
  const offStopSignals = onStopSignals(onSignal);
  const offHangup = onHangup(() => onSignal('SIGHUP'));
  // Output that has nowhere to go (a closed pipe, a terminal that is gone) must not crash the worker with its task in hand.
  const ignoreBrokenPipe = (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE' && error.code !== 'EIO') throw error;
  };
  process.stdout.on('error', ignoreBrokenPipe);
  process.stderr.on('error', ignoreBrokenPipe);
  const idle = options.settings.idleTimeoutMs;
  const waits = idle > 0 ? `shuts down after ${formatDuration(idle)} idle` : 'waits for work until stopped (Ctrl+C)';
  // Said once it is on the team (its first status): a name the team refuses is one line, with no banner before it.
  let introduced = false;
  const introduce = () => {
    if (!introduced) console.log(`[${name}] ${options.role} on ${describeModel(spec)}, board ${board.location}; ${waits}`);
    introduced = true;
  };
  const recent: string[] = [];
  const remember = (line: string) => {
    recent.push(`${new Date().toISOString()} ${line}`);
    if (recent.length > 20) recent.shift();
  };
  // An error nothing caught leaves its stack in .team/crash/ and hands the task back: never a silent death.
  const guard = guardProcess({
    rootDir: options.dir,
    name,
    role: options.role,
    handBack: () => board.tasks.reclaimAllFrom(name, `owner ${name} died`),
    recent: () => recent,
  });
  const teammate = new Teammate({
    name,
    role: options.role,
    rootDir: options.dir,
    model,
    wake,
    mail,
    signal: stop.signal,
    settings: options.settings,
    board,
    ...(options.prompt ? { prompt: options.prompt } : {}),
    emit: (event) => {
      introduce();
      if (event.type === 'activity') remember(`activity: ${event.text}`);
      if (event.type === 'status') remember(`status: ${event.status}${event.task ? ` #${event.task}` : ''}`);
      if (event.type === 'activity') console.log(`[${event.name}] ${event.text}`);
      else if (event.type === 'says') console.log(saysLine(event.name, event.text, { verbose: false, width: process.stdout.columns || 160 }));
      else if (event.type === 'status') console.log(`[${event.name}] ${event.status}${event.task ? ` #${event.task}` : ''}${event.reason ? ` (${event.reason})` : ''}`);
      else if (event.type === 'error' && !outage.hides('teammate', event.error.code, event.error.message)) console.error(`[${event.name}] error ${event.error.code}: ${event.error.message}`);
    },
  });
  const detach = await attachTelemetry(board, (error) => console.error(`[${name}] telemetry: ${error.message}`), { probe: true });
  // A hook that warns or blocks is said here, as the lead's REPL says it: this is where the person looks.
  // So is this worker's question, which only a lead of the board (its REPL, web board or MCP server) answers.
  const untapHooks = board.sink.tap((event) => {
    if (event.type === 'question_asked' && event.agent === name) {
      console.log(`[${name}] asks${event.pipeline != null ? ` (pipeline #${event.pipeline})` : ''}: ${event.question} — ${WHO_ANSWERS}`);
      return;
    }
    const line = event.type === 'hook_decision' ? describeTeamEvent(event, { verbose: false, width: process.stdout.columns || 160 }) : null;
    if (line) console.error(`[${name}] ${line.text}`);
  });
  try {
    // A refusal (a name already live, a bad config) is the person's to read as one line; anything else is a crash.
    const reason = await teammate.run().catch((error: unknown) => (error instanceof AutoteamError ? Promise.reject(error) : guard.crashed(error)));
    console.log(`[${name}] exited: ${reason}`);
    return 0;
  } finally {
    untapHooks();
    guard.dispose();
    await detach();
    stopProbing();
    await watcher.close();
    await board.close();
    offStopSignals();
    offHangup();
  }
}
