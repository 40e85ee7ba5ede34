#!/usr/bin/env node
import fs from 'node:fs';
import path from 'node:path';
import { Command, CommanderError, Help, Option } from 'commander';
import dotenv from 'dotenv';
import { loadTeammateSettings, type SettingsOverrides, type TeammateSettings } from '../core/agent/settings.js';
import { containment, describeContainment, findOnPath, INSTALL_HINT } from '../core/exec/sandbox.js';
import { AutoteamError, ConfigError } from '../core/errors.js';
import { BoardConnectionError } from '../core/board/pg/connection-error.js';
import { closestWord } from '../core/words.js';
import { agentsMdSettings, CONFIG_FILE, loadProjectConfig, type ProjectConfig } from '../core/config/project-config.js';
import { loadModelSpec } from '../core/model/config.js';
import { priceTable } from '../core/model/pricing.js';
import { BUILTIN_REGISTRY, StageRegistry } from '../core/stages/stage-registry.js';
import { registerBoardCommands } from './board-commands.js';
import { registerEventsCommand } from './events-command.js';
import { registerMcpCommand } from './mcp-command.js';
import { boardDir, boardOption, boardUrl, dirOption, remoteOf, unusedRemoteNote, UsageError } from './board-options.js';
import { runHeadless } from './run-command.js';
import { runWorker } from './worker-command.js';
import { startRepl } from './repl-command.js';
import { registerWebCommand, webOption, webPort } from './web-command.js';
import { registerPostCommand } from './post-command.js';
import { requirementsFileOption, requirementsFrom, tookAsValue } from './requirements-file.js';
import { teamSizeOptions } from './team-options.js';
import { configureUsageErrors } from './usage-errors.js';
import { roleCounts } from '../core/lead/team-size.js';
import { repositoryAt } from '../core/lead/repository.js';
import { probeRemote, RemoteError } from '../core/git/remote.js';
import { endHungUp } from '../frontend/quit.js';
import { OWN_PACKAGE } from '../core/own-package.js';
import { guardOutput } from '../frontend/printable.js';


const VERSION = OWN_PACKAGE.version;

/** Where pipelines work: the repository the board is in (default), another one, or none. */
function repoOptions(command: Command): Command {
  return command
    .option('--repo <path>', 'the git repository pipelines branch from (default: the one the board is in, if any)')
    .option('--no-worktree', 'work in workspace/<pipeline> even inside a git repository');
}

function modelChoice(options: Record<string, unknown>): { model: { provider?: string; model?: string; record?: string; replay?: string } } {
  const pick = (key: string) => (typeof options[key] === 'string' ? { [key]: options[key] as string } : {});
  // A model id is one word: one with spaces is a requirement the flag took as its value (`--model "Write …"`).
  if (typeof options.model === 'string' && /\s/.test(options.model.trim())) {
    throw new ConfigError(`${tookAsValue('--model', options.model)} (a model id is one word, like claude-sonnet-4-5)`);
  }
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

/** `--web` (port 7878) or `--web <port>`. */
function webChoice(options: Record<string, unknown>): { web?: { port: number } } {
  return options.web === undefined ? {} : { web: { port: webPort(options.web, '--web') } };
}

function repoChoice(options: Record<string, unknown>): { repo?: string | false } {
  if (options.worktree === false) {
    if (options.repo) throw new UsageError('--repo and --no-worktree contradict each other: give one');
    // A pipeline's branch on a remote needs a worktree to work it in.
    if (typeof options.remote === 'string') throw new UsageError('--remote and --no-worktree contradict each other: give one');
    return { repo: false };
  }
  return typeof options.repo === 'string' ? { repo: options.repo } : {};
}

function settingsOptions(command: Command): Command {
  return command
    .option('--poll-interval <duration>', 'idle poll fallback; default 5s (env POLL_INTERVAL)')
    .option('--idle-timeout <duration>', "idle this long → teammate shuts down; 0 = never; default 60s for a lead's teammates, never for autoteam worker (env IDLE_TIMEOUT)")
    .option('--command-timeout <duration>', 'each command an agent runs (bash, code, tests, checks) is killed after this long; default 30s (env COMMAND_TIMEOUT)')
    .option('--max-turns <n>', 'model calls per task; default 30 (env MAX_TURNS)')
    .option('--max-questions <n>', 'clarifying questions per task; default 8 (env MAX_QUESTIONS)')
    .option('--token-budget <n>', 'compact a conversation past this many tokens; default 60000 (env TOKEN_BUDGET)')
    .option('--max-revisions <n>', 'review rounds before a pipeline fails; default 3 (env MAX_REVISIONS)')
    .option('--max-pipeline-steps <n>', 'model calls over all stages of one pipeline before it fails; default 60 (env MAX_PIPELINE_STEPS)')
    .option('--token-budget-pipeline <n>', 'input+output tokens of one pipeline before it fails; default 500000 (env TOKEN_BUDGET_PIPELINE)')
    .option('--max-attempts <n>', 'unfinished attempts (model errors, turns that go idle or end without finishing) before a task fails; default 5 (env MAX_ATTEMPTS; first backoff env RETRY_BACKOFF, default 5s)')
    .option('--sandbox <mode>', 'contain the code the agents run: auto (bubblewrap when it works), required, off; default auto (env AUTOTEAM_SANDBOX)')
    .option('--allow-network <stages>', "let executed code use the network: 'all', or a comma list of stages (env AUTOTEAM_ALLOW_NETWORK)")
    .option('--remote <url>', 'pipelines branch from and push to this git remote (any git URL), so folders on other machines can work it (config repository.remote)')
    .option('--no-agents-md', "leave the repository's AGENTS.md / CLAUDE.md files out of the teammates' instructions (config agentsMd.enabled)")
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
    commandTimeout: pick('commandTimeout'),
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
  const settings = loadTeammateSettings({ ...project.limitsEnv, ...process.env }, overrides(options), StageRegistry.from(project.stages));
  if (Object.keys(project.stages).length) settings.stages = project.stages;
  // The person's hooks travel with the settings to every thread and `autoteam worker`.
  if (project.hooks && Object.keys(project.hooks).length) settings.hooks = project.hooks;
  // Its prices go to whoever prices a call: the lead's spend and every thread's model_call events.
  if (Object.keys(project.prices).length) settings.prices = priceTable(project.prices);
  // MCP servers travel as configured; each thread expands their ${VAR}s from its own environment.
  if (project.mcpServers) settings.mcpServers = project.mcpServers;
  // The repository's AGENTS.md files: the flag turns them off over the config, which may also size them.
  settings.agentsMd = agentsMdSettings(project, options.agentsMd !== false);
  // The remote a pipeline's branch lives on: the flag over the config (in memory only; tasks record it redacted).
  const remote = remoteOf(options, project);
  if (remote !== undefined) {
    settings.repository = { remote, ...(project.repository?.base ? { base: project.repository.base } : {}) };
    const unused = unusedRemoteNote(options, project.repository?.remote);
    if (unused) say(unused);
  }
  const contained = containment();
  if (settings.sandbox.mode === 'required' && contained.kind === 'none') {
    throw new ConfigError(`--sandbox required: ${contained.reason}; ${INSTALL_HINT}`);
  }
  if (settings.sandbox.mode !== 'off' && contained.kind === 'none') say(`autoteam: ${describeContainment(contained)}`);
  if (settings.sandbox.mode === 'off') {
    // Named where it was said: the flag, or the variable (from the environment or a .env file).
    const by = typeof options.sandbox === 'string' ? '--sandbox off' : `AUTOTEAM_SANDBOX=off${envFiles.has('AUTOTEAM_SANDBOX') ? ` in ${envFiles.get('AUTOTEAM_SANDBOX')}` : ''}`;
    say(`autoteam: sandbox turned off (${by}): code the agents run is not contained`);
  }
  // Without python3 every Python program, lint, test and check fails; the pipeline's own reason would not say why.
  if (!findOnPath('python3')) say('autoteam: python3 is not on PATH: the engineer cannot run Python programs, and the reviewer\'s checks (and its linter, tests and complexity count of Python) fail; install python3 or add it to PATH');
  return settings;
}

/**
 * Options given before a subcommand (`autoteam --engineers 3 run …`) belong to the program: the
 * subcommand takes each one it also has and was not given itself, and one it does not have is
 * refused, naming it, rather than ignored. `--dir` and `--board` are read up the chain (`inherited`).
 */
function passDown(action: Command): void {
  for (let parent = action.parent; parent; parent = parent.parent) {
    for (const option of parent.options) {
      const key = option.attributeName();
      if (parent.getOptionValueSource(key) !== 'cli' || key === 'dir' || key === 'board') continue;
      const name = action.parent === parent ? action.name() : `${action.parent!.name()} ${action.name()}`;
      if (!action.options.some((own) => own.long === option.long)) throw new UsageError(`${option.long} is not an option of ${name} (autoteam ${name} --help lists its options)`);
      if (action.getOptionValueSource(key) !== 'cli') action.setOptionValueWithSource(key, parent.getOptionValue(key), 'cli');
    }
  }
}

/**
 * An option whose value is another of the command's options (`run --dir --auto "…"`): commander takes
 * the next word as the value whatever it is, and `--dir` would then name a folder called `--auto`.
 * Given as one word (`--dir=--auto`), the value is what was meant.
 */
function checkValuesAreNotOptions(action: Command): void {
  const known = new Set<string>();
  let root = action;
  for (let command: Command | null = action; command; command = command.parent) {
    for (const option of command.options) for (const flag of [option.long, option.short]) if (flag) known.add(flag);
    root = command;
  }
  const joined = new Set((root as Command & { rawArgs?: string[] }).rawArgs ?? []);
  for (let command: Command | null = action; command; command = command.parent) {
    for (const option of command.options) {
      const key = option.attributeName();
      if (!option.required || command.getOptionValueSource(key) !== 'cli') continue;
      const values = [command.getOptionValue(key)].flat();
      const taken = values.find((value) => typeof value === 'string' && known.has(value.split('=')[0]!) && !joined.has(`${option.long}=${value}`));
      if (taken !== undefined) throw new UsageError(`${option.long} is missing its value: ${String(taken)} is an option of its own`);
    }
  }
}

export function buildProgram(): Command {
  const program = new Command('autoteam')
    .description('An autonomous team (analyst, engineer, reviewer) working a shared task board, led from a REPL.')
    // The version, and the sandbox this machine gives: a probe that runs bwrap, so only when asked,
    // not at the start of every command.
    .option('-V, --version', 'output the version number')
    .on('option:version', () => {
      process.stdout.write(`${VERSION}\n${describeContainment()}\n`);
      throw new CommanderError(0, 'commander.version', VERSION);
    })
    // Options before a subcommand belong to the program; after it, to the subcommand (each has --dir).
    .enablePositionalOptions()
    .addOption(dirOption())
    .addOption(boardOption())
    .option('--auto', 'a simulated user answers the analyst')
    .option('--no-team', 'do not spawn the default analyst, engineer and reviewer')
    .addOption(webOption());
  repoOptions(program);
  teamSizeOptions(program);
  settingsOptions(program)
    .usage('[options] [command]')
    // `autoteam help [command]` (the action below) listed with the commands, as commander's own would be.
    .configureHelp({ visibleCommands: (command) => [...new Help().visibleCommands(command), ...(command.parent ? [] : [new Command('help').argument('[command]').description("print the help, or a command's")])] })
    // Captures a mistyped subcommand, which would otherwise be reported as "too many arguments".
    .argument('[command...]')
    .action(async (words: string[], options: Record<string, unknown>, command: Command) => {
      // `autoteam help [command]`, as git and npm take it.
      if (words[0] === 'help') {
        if (words.length > 2) throw new UsageError(`autoteam help takes one command's name, got '${words.slice(1).join(' ')}'`);
        const about = words[1] === undefined || words[1] === 'help' ? command : command.commands.find((sub) => sub.name() === words[1]);
        if (!about) throw new UsageError(`unknown command '${words[1]}' (autoteam --help lists them)`);
        about.outputHelp();
        return;
      }
      // `autoteam rnu "Write it"` too: the first word names the command that is not there.
      if (words.length) {
        const closest = closestWord(words[0]!, command.commands.map((sub) => sub.name()));
        // A requirement given as the command (`autoteam "Write a …"`): say where a requirement goes.
        const sentence = !closest && (/\s/.test(words[0]!.trim()) || words.length > 1);
        const hint = sentence ? ' — a requirement goes to autoteam run "…" (work it now) or autoteam post "…" (onto the board), or is typed in the REPL' : closest ? ` — did you mean ${closest}?` : '';
        throw new UsageError(`unknown command '${words[0]}'${hint} (autoteam --help lists them)`);
      }
      const counts = roleCounts(options);
      if (options.team === false && counts.length) throw new UsageError(`--no-team and ${counts[0]!.flag} contradict each other: give one`);
      await startRepl({
        counts,
        dir: boardDir(command),
        auto: options.auto === true,
        team: options.team !== false,
        ...withProject(options, boardDir(command)),
        ...repoChoice(options),
        ...board(command),
        ...modelChoice(options),
        ...webChoice(options),
      });
    });

  registerBoardCommands(program);
  registerWebCommand(program);
  registerEventsCommand(program);
  registerMcpCommand(program, { settingsOptions, repoOptions, withProject, modelChoice, repoChoice });
  registerPostCommand(program, { repoOptions, repoChoice });

  settingsOptions(
    program
      .command('worker')
      .description('run one teammate in the foreground of this process against the board')
      .option('--name <name>', 'teammate name (letters, digits, _ and -; default: its role, or <role>-2, … when that name is live)')
      .requiredOption('--role <role>', 'analyst, engineer, reviewer, a role of your own stages, or any (fills in for the roles nobody else works)')
      .option('--prompt <text>', 'extra instructions for this teammate')
      .addOption(dirOption())
      .addOption(boardOption()),
  ).action(async (options: Record<string, unknown>, command: Command) => {
    const project = withProject(options, boardDir(command));
    // No lead starts a worker again once it idled out: it waits for work until stopped, unless told how long.
    if (options.idleTimeout === undefined && process.env.IDLE_TIMEOUT === undefined) project.settings.idleTimeoutMs = 0;
    const code = await runWorker({
      dir: boardDir(command),
      ...(options.name === undefined ? {} : { name: String(options.name) }),
      role: String(options.role),
      prompt: options.prompt as string | undefined,
      ...project,
      ...board(command),
      ...modelChoice(options),
    });
    process.exitCode = code;
  });

  settingsOptions(
    program
      .command('run')
      .description('post requirements (a pipeline each), let the team work them at once headless, print a summary of each (exit 0 all approved, 1 not, 2 a usage, configuration or model error, 130 interrupted)')
      .argument('[requirement...]', 'what you want built; each argument is one requirement (quote it), all worked at once by one team')
      .addOption(requirementsFileOption())
      .option('--auto', 'a simulated user answers the analyst (otherwise questions wait for a person)')
      .addOption(new Option('--start-stage <stage>', 'skip earlier stages').choices(BUILTIN_REGISTRY.starts()))
      .option('--json', 'print the summary as JSON (the same as --output-format json)')
      .addOption(new Option('--output-format <format>', 'text (lines, then the summary), json (the summary alone) or stream-json (an event a line while it runs, then {"type":"result", …})').choices(['text', 'json', 'stream-json']))
      .option('--timeout <duration>', 'give up after this long (default 10m)')
      .addOption(webOption())
      .addOption(dirOption())
      .addOption(boardOption()),
  );
  teamSizeOptions(repoOptions(program.commands.at(-1)!)).action(async (words: string[], options: Record<string, unknown>, command: Command) => {
    if (options.json === true && options.outputFormat !== undefined && options.outputFormat !== 'json') {
      throw new UsageError(`--json and --output-format ${String(options.outputFormat)} contradict each other: give one`);
    }
    const code = await runHeadless({
      dir: boardDir(command),
      requirements: requirementsFrom(words, options.file, command),
      stdinHeldRequirements: [options.file ?? []].flat().includes('-'),
      counts: roleCounts(options),
      auto: options.auto === true,
      json: options.json === true,
      ...(options.outputFormat ? { outputFormat: options.outputFormat as 'text' | 'json' | 'stream-json' } : {}),
      ...(typeof options.startStage === 'string' ? { startStage: options.startStage } : {}),
      timeout: options.timeout as string | undefined,
      ...withProject(options, boardDir(command)),
      ...repoChoice(options),
      ...board(command),
      ...modelChoice(options),
      ...webChoice(options),
    });
    process.exitCode = code;
  });

  return program;
}

export async function main(argv: string[]): Promise<number> {
  // Text from files, commands, hooks and models reaches the terminal as text, never as its controls.
  guardOutput();
  const program = buildProgram();
  configureUsageErrors(program, argv);
  // A wrong --repo, or a remote that does not answer, is refused before any command opens a board,
  // so nothing is left behind in --dir.
  program.hook('preAction', async (_program, action) => {
    // `autoteam help`: the help alone, as --help is, with no config read and no remote asked.
    if (action === program && action.args[0] === 'help') return;
    checkValuesAreNotOptions(action);
    passDown(action);
    const options = action.opts<Record<string, unknown>>();
    if (options.worktree === false) return;
    if (typeof options.repo === 'string') await repositoryAt(options.repo);
    if (!action.options.some((option) => option.long === '--remote')) return;
    // `merge <n> --remote` is refused for the combination, not for a remote it never uses.
    if (action.name() === 'merge' && !options.queue) return;
    const project = loadProjectConfig(boardDir(action));
    const remote = remoteOf(options, project);
    if (remote !== undefined) await probeRemote(remote, project.repository?.base).catch((error: Error) => {
      // A base branch the remote lacks is the config's `repository.base`: named, as any config mistake is.
      const base = error instanceof RemoteError && error.kind === 'no-branch' && project.repository?.base ? `${project.file}: repository.base: ` : '';
      throw new ConfigError(`${base}${error.message}`);
    });
  });
  try {
    // `--dir <path>` or `--dir=<path>`, as commander reads it: its .env is loaded before the parse.
    const dirIndex = argv.findIndex((arg) => arg === '--dir' || arg.startsWith('--dir='));
    const dir = dirIndex < 0 ? undefined : argv[dirIndex] === '--dir' ? argv[dirIndex + 1] : argv[dirIndex]!.slice('--dir='.length);
    envFiles = loadEnvFiles(['.env', ...(dir ? [path.join(dir, '.env')] : [])]);
    loadModelSpec(process.env); // a bad ANTHROPIC_* / OPENAI_* setting is a usage error before anything starts
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.exitCode === 0 ? 0 : 2;
    }
    if (error instanceof AutoteamError) {
      // A bad value from a .env file: which file, since the environment the person looks at lacks it.
      const variable = error.code === 'CONFIG_ERROR' ? /^([A-Z][A-Z0-9_]*)[: ]/.exec(error.message)?.[1] : undefined;
      const file = variable === undefined ? undefined : envFiles.get(variable);
      console.error(`autoteam: ${error.message}${file ? ` (set in ${file})` : ''}`);
      if (error instanceof BoardConnectionError) return error.misconfigured ? 2 : 1;
      return ['NOT_FOUND', 'BOARD_FILE_INVALID', 'USAGE', 'CONFIG_ERROR', 'BOARD_BUSY', 'INVALID_REQUIREMENT', 'INVALID_STAGE'].includes(error.code) ? 2 : 1;
    }
    console.error(`autoteam: ${(error as Error).message ?? String(error)}`);
    return 1;
  }
}

/** Each variable a .env file set, and that file (read before the parse). */
let envFiles = new Map<string, string>();

/** Loads the .env files there are: each variable one of them set (an existing one is never overridden), and the file. */
function loadEnvFiles(files: readonly string[]): Map<string, string> {
  const set = new Map<string, string>();
  for (const file of files) {
    if (!fs.existsSync(file)) continue;
    const before = new Set(Object.keys(process.env));
    const { parsed } = dotenv.config({ quiet: true, path: file });
    for (const key of Object.keys(parsed ?? {})) if (!before.has(key)) set.set(key, path.resolve(file));
  }
  return set;
}

const code = await main(process.argv);
process.exitCode = code;
endHungUp();
