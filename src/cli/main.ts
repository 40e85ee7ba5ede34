#!/usr/bin/env node
import fs from 'node:fs';
import path from 'node:path';
import { Command, CommanderError, Option } from 'commander';
import dotenv from 'dotenv';
import { loadTeammateSettings, type SettingsOverrides, type TeammateSettings } from '../core/agent/settings.js';
import { containment, describeContainment, INSTALL_HINT } from '../core/exec/sandbox.js';
import { Mailbox } from '../core/board/mailbox.js';
import { type Board, openBoard } from '../core/board/board.js';
import { describeUrl, isPostgresUrl, urlProblem } from '../core/board/pg/url.js';
import { Pipeline } from '../core/stages/pipeline.js';
import { diffPipeline, discardPipeline, mergePipeline } from '../frontend/branches.js';
import { cancelPipeline, pipelineId, retryPipeline } from '../frontend/commands.js';
import { AutoteamError, ConfigError } from '../core/errors.js';
import { CONFIG_FILE, defaultProjectConfig, loadProjectConfig, type ProjectConfig } from '../core/config/project-config.js';
import { loadModelSpec } from '../core/model/config.js';
import { allStages, configureStages } from '../core/stages/definitions.js';
import { stageTools } from '../core/tools/registry.js';
import { runHeadless } from './run-command.js';
import { runWorker } from './worker-command.js';
import { formatBoard } from '../frontend/format.js';
import { startRepl } from './repl-command.js';

const VERSION = (JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** Usage and configuration errors exit with 2; a failed pipeline with 1. */
export class UsageError extends AutoteamError {
  constructor(message: string) {
    super(message, 'USAGE');
  }
}

/**
 * The board directory a command works in. A path that is a file, or a directory this process cannot
 * write (for the commands that write), is one line and exit 2, not a raw ENOTDIR/EACCES later.
 */
function boardDir(command: Command, writes = true): string {
  const own = command.opts().dir as string | undefined;
  const global = command.parent?.opts().dir as string | undefined;
  if (isPostgresUrl(own ?? global ?? '')) throw new UsageError('--dir takes a folder; for a board in PostgreSQL use --board <postgres://…>');
  const dir = path.resolve(own ?? global ?? process.cwd());
  let stat: fs.Stats | undefined;
  try {
    stat = fs.statSync(dir, { throwIfNoEntry: false });
  } catch (error) {
    throw new UsageError(`--dir: cannot use ${dir} as a board (${(error as NodeJS.ErrnoException).code === 'ENOTDIR' ? 'a part of the path is a file' : String((error as NodeJS.ErrnoException).code)})`);
  }
  if (stat && !stat.isDirectory()) throw new UsageError(`--dir: ${dir} is a file, not a directory`);
  if (writes) {
    try {
      fs.mkdirSync(dir, { recursive: true });
      fs.accessSync(dir, fs.constants.W_OK | fs.constants.X_OK);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'error';
      throw new UsageError(`--dir: cannot use ${dir} as a board (${code === 'EACCES' || code === 'EROFS' || code === 'EPERM' ? 'not writable' : code})`);
    }
  }
  return dir;
}

function existingBoardDir(command: Command): string {
  const dir = boardDir(command, false);
  if (!fs.existsSync(dir)) throw new UsageError(`--dir: ${dir} does not exist`);
  return dir;
}

/** Where pipelines work: the repository the board is in (default), another one, or none. */
function repoOptions(command: Command): Command {
  return command
    .option('--repo <path>', 'the git repository pipelines branch from (default: the one the board is in, if any)')
    .option('--no-worktree', 'work in workspace/<pipeline> even inside a git repository');
}

function modelChoice(options: Record<string, unknown>): { model: { provider?: string; model?: string; record?: string; replay?: string } } {
  const pick = (key: string) => (typeof options[key] === 'string' ? { [key]: options[key] as string } : {});
  return { model: { ...pick('provider'), ...pick('model'), ...pick('record'), ...pick('replay') } };
}

/** autoteam.config.json of the board folder, read once per command, and the settings it shapes. */
function withProject(options: Record<string, unknown>, dir: string): { project: ProjectConfig; settings: TeammateSettings } {
  const project = loadProjectConfig(dir);
  return { project, settings: settingsFor(options, project) };
}

function board(command: Command): { board?: string } {
  const url = boardUrl(command);
  return url ? { board: url } : {};
}

function repoChoice(options: Record<string, unknown>): { repo?: string | false } {
  if (options.worktree === false) {
    if (options.repo) throw new UsageError('--repo and --no-worktree contradict each other: give one');
    return { repo: false };
  }
  return typeof options.repo === 'string' ? { repo: options.repo } : {};
}

const dirOption = () => new Option('--dir <path>', 'board root (holds .tasks/ and .team/); with --board, the local folder for workspaces; default: the current directory');
const boardOption = () => new Option('--board <url>', 'a postgres:// URL: the board in PostgreSQL, shared across machines (env AUTOTEAM_BOARD)');

/** The PostgreSQL board's URL from --board or AUTOTEAM_BOARD, or undefined for the file board in --dir. */
function boardUrl(command: Command): string | undefined {
  const own = command.opts().board as string | undefined;
  const global = command.parent?.opts().board as string | undefined;
  const flag = own ?? global;
  const name = flag !== undefined ? '--board' : 'AUTOTEAM_BOARD';
  const raw = flag ?? process.env.AUTOTEAM_BOARD;
  if (raw === undefined) return undefined;
  const value = raw.trim();
  if (!value) {
    // An empty variable means "not set"; an empty flag is a mistake.
    if (flag === undefined) return undefined;
    throw new UsageError('--board needs a postgres:// URL (without it, the board is the folder --dir)');
  }
  if (!isPostgresUrl(value)) throw new UsageError(`${name} takes a postgres:// URL, got '${describeUrl(value)}' (for a board in a folder, use --dir <folder>)`);
  const problem = urlProblem(value);
  if (problem) throw new UsageError(`${name}: '${describeUrl(value)}': ${problem}`);
  return value;
}

/** The board a read-only command looks at: the PostgreSQL board, or the file board in --dir. */
async function openExisting(command: Command): Promise<Board> {
  const url = boardUrl(command);
  if (url) return openBoard(url, boardDir(command, false), { create: false });
  const dir = existingBoardDir(command);
  if (!fs.existsSync(path.join(dir, '.tasks'))) throw new UsageError(`no board in ${dir} (no .tasks/ directory)`);
  return openBoard(dir);
}

function settingsOptions(command: Command): Command {
  return command
    .option('--poll-interval <duration>', 'idle poll fallback, e.g. 5s (env POLL_INTERVAL)')
    .option('--idle-timeout <duration>', 'idle this long → teammate shuts down; 0 = never (env IDLE_TIMEOUT)')
    .option('--max-turns <n>', 'model calls per task (env MAX_TURNS)')
    .option('--max-questions <n>', 'clarifying questions per task (env MAX_QUESTIONS)')
    .option('--token-budget <n>', 'compact a conversation past this many tokens (env TOKEN_BUDGET)')
    .option('--max-revisions <n>', 'review rounds before a pipeline fails (env MAX_REVISIONS)')
    .option('--max-pipeline-steps <n>', 'model calls over all stages of one pipeline before it fails; default 60 (env MAX_PIPELINE_STEPS)')
    .option('--token-budget-pipeline <n>', 'input+output tokens of one pipeline before it fails; default 500000 (env TOKEN_BUDGET_PIPELINE)')
    .option('--max-attempts <n>', 'failed attempts (model or runtime errors) before a task fails; default 5 (env MAX_ATTEMPTS)')
    .option('--sandbox <mode>', 'contain the code the agents run: auto (bubblewrap when it works), required, off (env AUTOTEAM_SANDBOX)')
    .option('--allow-network <stages>', "let executed code use the network: 'all', or a comma list of stages (env AUTOTEAM_ALLOW_NETWORK)")
    .option('--provider <name>', 'anthropic, openai (any OpenAI-compatible server) or offline; default: from the keys set (env AUTOTEAM_PROVIDER)')
    .option('--model <id>', 'the model for every role (env MODEL_ID)')
    .option('--record <dir>', 'write every model request and response of the session to files in <dir>')
    .option('--replay <dir>', 'serve the responses recorded in <dir> instead of calling a model');
}

function overrides(options: Record<string, unknown>): SettingsOverrides {
  const pick = (key: string) => (options[key] === undefined ? undefined : String(options[key]));
  return {
    pollInterval: pick('pollInterval'),
    idleTimeout: pick('idleTimeout'),
    maxTurns: pick('maxTurns'),
    maxQuestions: pick('maxQuestions'),
    tokenBudget: pick('tokenBudget'),
    maxRevisions: pick('maxRevisions'),
    maxPipelineSteps: pick('maxPipelineSteps'),
    tokenBudgetPipeline: pick('tokenBudgetPipeline'),
    maxAttempts: pick('maxAttempts'),
    sandbox: pick('sandbox'),
    allowNetwork: pick('allowNetwork'),
  };
}

/**
 * The settings a command runs with. `--sandbox required` without a working bubblewrap refuses to
 * start; otherwise code that will run unsandboxed is said once, on stderr.
 */
function settingsFor(options: Record<string, unknown>, project: ProjectConfig, say = (line: string) => console.error(line)): TeammateSettings {
  // autoteam.config.json's limits sit under the environment and the flags; its stages go to every teammate.
  const settings = loadTeammateSettings({ ...project.limitsEnv, ...process.env }, overrides(options));
  if (Object.keys(project.stages).length) settings.stages = project.stages;
  // The lead's process moves work between the same stages as the teammates' threads.
  configureStages(project.stages);
  const contained = containment();
  if (settings.sandbox.mode === 'required' && contained.kind === 'none') {
    throw new ConfigError(`--sandbox required: ${contained.reason}; ${INSTALL_HINT}`);
  }
  if (settings.sandbox.mode !== 'off' && contained.kind === 'none') say(`autoteam: ${describeContainment(contained)}`);
  if (settings.sandbox.mode === 'off') say('autoteam: sandbox turned off (--sandbox off): code the agents run is not contained');
  return settings;
}

export function buildProgram(): Command {
  const program = new Command('autoteam')
    .description('An autonomous team (analyst, engineer, reviewer) working a shared task board, led from a REPL.')
    .version(`${VERSION}\n${describeContainment()}`)
    // Options before a subcommand belong to the program; after it, to the subcommand (each has --dir).
    .enablePositionalOptions()
    .addOption(dirOption())
    .addOption(boardOption())
    .option('--auto', 'a simulated user answers the analyst')
    .option('--no-team', 'do not spawn the default analyst, engineer and reviewer');
  repoOptions(program);
  settingsOptions(program)
    .usage('[options] [command]')
    // Captures a mistyped subcommand, which would otherwise be reported as "too many arguments".
    .argument('[command]')
    .action(async (unknown: string | undefined, options: Record<string, unknown>, command: Command) => {
      if (unknown) throw new UsageError(`unknown command '${unknown}' (autoteam --help lists them)`);
      await startRepl({
        dir: boardDir(command),
        auto: options.auto === true,
        team: options.team !== false,
        ...withProject(options, boardDir(command)),
        ...repoChoice(options),
        ...board(command),
        ...modelChoice(options),
      });
    });

  program
    .command('tasks')
    .description('print the board: [ ] pending, [>] in progress, [x] completed, [!] failed, [-] cancelled')
    .addOption(dirOption())
    .addOption(boardOption())
    .option('--json', 'print the tasks as JSON')
    .action(async (options: { json?: boolean }, command: Command) => {
      // Reading a board never creates one.
      if (!boardUrl(command)) {
        const dir = existingBoardDir(command);
        if (!fs.existsSync(path.join(dir, '.tasks'))) {
          console.log(options.json ? '[]' : `No tasks (no .tasks/ in ${dir}).`);
          return;
        }
      }
      const board = await openExisting(command);
      try {
        const tasks = board.tasks.list();
        if (options.json) console.log(JSON.stringify(tasks, null, 2));
        else console.log(formatBoard(tasks));
        for (const problem of board.tasks.problems()) console.error(`skipped ${problem.message}`);
      } finally {
        await board.close();
      }
    });

  program
    .command('show')
    .description("print one task's JSON")
    .argument('<id>', 'task id')
    .addOption(dirOption())
    .addOption(boardOption())
    .action(async (id: string, _options: unknown, command: Command) => {
      const n = Number(id.replace(/^#/, ''));
      if (!Number.isInteger(n) || n <= 0) throw new UsageError(`task id must be a positive whole number, got '${id}'`);
      const board = await openExisting(command);
      try {
        console.log(JSON.stringify(board.tasks.get(n), null, 2));
      } finally {
        await board.close();
      }
    });

  // One pipeline, by id: what the person does to it from any terminal (the REPL has the same as /commands).
  const pipelineCommands: Array<[string, string, (board: Board, id: number) => Promise<string>]> = [
    ['cancel', "cancel a pipeline's open tasks; their owners stop", (board, id) => cancelPipeline(new Pipeline(board.tasks, board.mailbox), id, board.registry.read().lead)],
    ['retry', 'restart a failed or cancelled pipeline from the stage that failed', (board, id) => retryPipeline(new Pipeline(board.tasks, board.mailbox), id, board.registry.read().lead)],
    ['diff', "print a pipeline's branch: its files and diff against where it started", (board, id) => diffPipeline(board.tasks, id)],
    ['merge', "merge an approved pipeline's branch into your current branch, then remove its worktree and branch", (board, id) => mergePipeline(board.tasks, id, board.registry.read().lead)],
    ['discard', "remove a pipeline's worktree and branch", (board, id) => discardPipeline(board.tasks, id, board.registry.read().lead)],
  ];
  for (const [name, what, act] of pipelineCommands) {
    program
      .command(name)
      .description(what)
      .argument('<pipeline>', 'pipeline id')
      .addOption(dirOption())
      .addOption(boardOption())
      .action(async (id: string, _options: unknown, command: Command) => {
        const n = pipelineId(id);
        const board = await openExisting(command);
        try {
          console.log(await act(board, n));
        } finally {
          await board.close();
        }
      });
  }

  program
    .command('export')
    .description('write a postgres:// board as files (.tasks/task_<id>.json, .team/…) into --dir, an empty folder')
    .addOption(dirOption())
    .addOption(boardOption())
    .action(async (_options: unknown, command: Command) => {
      const url = boardUrl(command);
      if (!url) throw new UsageError('export needs --board postgres://… (or AUTOTEAM_BOARD)');
      const dir = boardDir(command);
      const { exportBoard } = await import('../core/board/pg/transfer.js');
      const counts = await exportBoard(url, dir);
      console.log(`exported ${counts.tasks} tasks, ${counts.requests} requests, ${counts.messages} messages and ${counts.files} submitted files from ${describeUrl(url)} to ${dir}`);
    });

  program
    .command('import')
    .description('load the file board in --dir into an empty postgres:// board')
    .addOption(dirOption())
    .addOption(boardOption())
    .action(async (_options: unknown, command: Command) => {
      const url = boardUrl(command);
      if (!url) throw new UsageError('import needs --board postgres://… (or AUTOTEAM_BOARD)');
      const dir = existingBoardDir(command);
      const { importBoard } = await import('../core/board/pg/transfer.js');
      const counts = await importBoard(dir, url);
      console.log(`imported ${counts.tasks} tasks, ${counts.requests} requests, ${counts.messages} messages and ${counts.files} submitted files from ${dir} into ${describeUrl(url)}`);
    });

  program
    .command('stages')
    .description("print each stage's role, prompt, tools and transitions as configured (no model is called)")
    .option('--json', 'as JSON')
    .addOption(dirOption())
    .action((options: { json?: boolean }, command: Command) => {
      const project = loadProjectConfig(boardDir(command, false));
      configureStages(project.stages);
      const stages = allStages().map(({ subject: _subject, ...stage }) => ({ ...stage, offeredTools: stageTools(stage.stage).map((tool) => tool.name) }));
      if (options.json) {
        console.log(JSON.stringify(stages, null, 2));
        return;
      }
      if (project.file) console.log(`(with ${project.file})\n`);
      for (const stage of stages) {
        console.log(`== ${stage.stage} (${stage.title}) — role: ${stage.role}`);
        console.log(stage.systemPrompt.replace(/^/gm, '   '));
        console.log(`   tools: ${stage.offeredTools.join(', ')}`);
        for (const [signal, transition] of Object.entries(stage.transitions)) {
          const label = transition.revise ? `${transition.next} (revision n+1, up to max_revisions; fails when not converging)` : transition.next;
          console.log(`   ${signal} → ${label}`);
        }
        if (stage.stage === 'review') {
          console.log('   approve_code needs run_linter + run_tests on the submitted version, passing tests, and every criterion met with evidence');
        }
        console.log('');
      }
    });

  program
    .command('init')
    .description(`write ${CONFIG_FILE} with the defaults (the team, stage prompts and tools, limits) into --dir`)
    .addOption(dirOption())
    .action((_options: unknown, command: Command) => {
      const dir = boardDir(command);
      const file = path.join(dir, CONFIG_FILE);
      if (fs.existsSync(file)) throw new UsageError(`${file} already exists (remove it first to start over)`);
      fs.writeFileSync(file, `${JSON.stringify(defaultProjectConfig(), null, 2)}\n`);
      console.log(`wrote ${file}: the team, each stage's prompt and tools, and the limits as autoteam runs without it`);
    });

  settingsOptions(
    program
      .command('worker')
      .description('run one teammate in the foreground of this process against the board')
      .requiredOption('--name <name>', 'teammate name (letters, digits, _ and -)')
      .requiredOption('--role <role>', 'role, e.g. analyst, engineer or reviewer')
      .option('--prompt <text>', 'extra instructions for this teammate')
      .addOption(dirOption())
      .addOption(boardOption()),
  ).action(async (options: Record<string, unknown>, command: Command) => {
    const code = await runWorker({
      dir: boardDir(command),
      name: String(options.name),
      role: String(options.role),
      prompt: options.prompt as string | undefined,
      ...withProject(options, boardDir(command)),
      ...board(command),
      ...modelChoice(options),
    });
    process.exitCode = code;
  });

  settingsOptions(
    program
      .command('run')
      .description('post a requirement, let the team work it headless, print a summary (exit 0 approved, 1 failed)')
      .argument('<requirement...>', 'what you want built')
      .option('--auto', 'a simulated user answers the analyst (otherwise questions wait for a person)')
      .addOption(new Option('--start-stage <stage>', 'skip earlier stages').choices(['requirements', 'implementation']))
      .option('--json', 'print the summary as JSON')
      .option('--timeout <duration>', 'give up after this long (default 10m)')
      .addOption(dirOption())
      .addOption(boardOption()),
  );
  repoOptions(program.commands.at(-1)!).action(async (words: string[], options: Record<string, unknown>, command: Command) => {
    const code = await runHeadless({
      dir: boardDir(command),
      requirement: words.join(' '),
      auto: options.auto === true,
      json: options.json === true,
      startStage: options.startStage as 'requirements' | 'implementation' | undefined,
      timeout: options.timeout as string | undefined,
      ...withProject(options, boardDir(command)),
      ...repoChoice(options),
      ...board(command),
      ...modelChoice(options),
    });
    process.exitCode = code;
  });

  return program;
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  program.exitOverride();
  program.configureOutput({ writeErr: (text) => process.stderr.write(text) });
  for (const command of program.commands) command.exitOverride();
  try {
    const dirIndex = argv.indexOf('--dir');
    const dir = dirIndex >= 0 ? argv[dirIndex + 1] : undefined;
    dotenv.config({ quiet: true });
    if (dir && fs.existsSync(path.join(dir, '.env'))) dotenv.config({ quiet: true, path: path.join(dir, '.env') });
    loadModelSpec(process.env); // a bad ANTHROPIC_* / OPENAI_* setting is a usage error before anything starts
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.exitCode === 0 ? 0 : 2;
    }
    if (error instanceof AutoteamError) {
      console.error(`autoteam: ${error.message}`);
      return ['NOT_FOUND', 'BOARD_FILE_INVALID', 'USAGE', 'CONFIG_ERROR', 'BOARD_BUSY', 'INVALID_REQUIREMENT'].includes(error.code) ? 2 : 1;
    }
    console.error(`autoteam: ${(error as Error).message ?? String(error)}`);
    return 1;
  }
}

const code = await main(process.argv);
process.exitCode = code;
