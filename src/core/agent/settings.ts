import type { StageSpec } from '../stages/configured-stage.js';
import { BUILTIN_REGISTRY, type StageRegistry } from '../stages/stage-registry.js';
import type { PriceTable } from '../model/pricing.js';
import type { HooksConfig } from '../hooks/config.js';
import type { McpServerSpec } from '../mcp/config.js';
import { type AgentsMdSettings, DEFAULT_AGENTS_MD_BYTES } from './repository-instructions.js';
import { ConfigError } from '../errors.js';
import type { RepositorySettings } from '../git/remote-branch.js';
import { DEFAULT_SANDBOX_POLICY, type SandboxMode, type SandboxPolicy } from '../exec/sandbox.js';
import { secretValues } from '../trace/redact.js';
import { DEFAULT_RUNTIME_SETTINGS, type RuntimeSettings } from '../tools/tool.js';
import { DEFAULT_MAX_INBOX_BYTES } from '../board/mailbox.js';
import { DEFAULT_MAX_REQUEST_TOKENS } from './request-size.js';

export interface TeammateSettings {
  /** IDLE poll: the fallback when no watcher event arrives (POLL_INTERVAL). */
  pollMs: number;
  /** IDLE this long with nothing to do → shutdown (IDLE_TIMEOUT; 0 = never). */
  idleTimeoutMs: number;
  leaseMs: number;
  maxTurns: number;
  /** Past this many tokens the conversation is compacted (TOKEN_BUDGET). */
  tokenBudget: number;
  maxTokens: number;
  /** The most estimated input tokens one model request may carry (MAX_REQUEST_TOKENS). */
  maxRequestTokens: number;
  /** An inbox holding this many bytes refuses further messages (MAX_INBOX_MB). */
  maxInboxBytes: number;
  commandTimeoutMs: number;
  maxOutputChars: number;
  /** Unfinished attempts (model or runtime errors, idle or unsignalled turns) before a task fails (MAX_ATTEMPTS). */
  maxAttempts: number;
  /** How often a teammate tells the registry it is alive. */
  heartbeatMs: number;
  /** The first backoff after an unfinished attempt (RETRY_BACKOFF); it doubles up to `retryMaxMs`. */
  retryBaseMs: number;
  retryMaxMs: number;
  runtime: RuntimeSettings;
  /** How the processes the agents start are contained. */
  sandbox: SandboxPolicy;
  /** Stages from autoteam.config.json: changes to the built-in ones, and new ones. */
  stages?: Record<string, StageSpec>;
  /** The person's hooks from autoteam.config.json (plain JSON: it travels to every thread). */
  hooks?: HooksConfig;
  /** The price table (built in, with autoteam.config.json's prices over it); absent: the built-in one. */
  prices?: PriceTable;
  /** The repository's AGENTS.md files in a task's instructions (repository mode): on, and how much at most. */
  agentsMd: AgentsMdSettings;
  /** MCP servers from autoteam.config.json, their `${VAR}`s unexpanded (each process expands its own). */
  mcpServers?: Record<string, McpServerSpec>;
  /** `repository.remote` (or `--remote`): pipelines' branches live on this remote; the full URL, kept in memory only. */
  repository?: RepositorySettings;
}

export const DEFAULT_TEAMMATE_SETTINGS: TeammateSettings = {
  pollMs: 5_000,
  idleTimeoutMs: 60_000,
  leaseMs: 30_000,
  maxTurns: 30,
  tokenBudget: 60_000,
  maxTokens: 4_096,
  maxRequestTokens: DEFAULT_MAX_REQUEST_TOKENS,
  maxInboxBytes: DEFAULT_MAX_INBOX_BYTES,
  commandTimeoutMs: 30_000,
  maxOutputChars: 8_000,
  maxAttempts: 5,
  heartbeatMs: 5_000,
  retryBaseMs: 5_000,
  retryMaxMs: 5 * 60_000,
  runtime: DEFAULT_RUNTIME_SETTINGS,
  sandbox: DEFAULT_SANDBOX_POLICY,
  agentsMd: { enabled: true, maxBytes: DEFAULT_AGENTS_MD_BYTES },
};

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const;

/**
 * Parses `500ms`, `5s`, `2m`, `1h` into milliseconds. A bare number other than 0 is refused: is
 * `IDLE_TIMEOUT=300` five minutes or 300 ms? (`0` is no time in any unit.)
 */
export function parseDuration(value: string, name: string, examples = '500ms, 5s, 2m, 1h'): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(value);
  if (!match) throw new ConfigError(`${name}: '${value}' is not a duration (examples: ${examples})`);
  const amount = Number(match[1]);
  if (!match[2] && amount !== 0) throw new ConfigError(`${name}: '${value.trim()}' needs a unit (examples: ${examples})`);
  return Math.round(amount * UNIT_MS[(match[2] ?? 'ms') as keyof typeof UNIT_MS]);
}

/** The longest a Node timer holds: 2^31 - 1 ms (about 24.8 days); a longer one fires at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** parseDuration for a time autoteam waits with a timer: refused past what a timer holds. */
export function parseWait(value: string, name: string, examples?: string): number {
  const ms = parseDuration(value, name, examples);
  if (ms > MAX_TIMER_MS) throw new ConfigError(`${name}: '${value}' is longer than autoteam can wait (at most ${Math.floor(MAX_TIMER_MS / 3_600_000)}h, about 24 days)`);
  return ms;
}

/** A whole number of at least `min`: anything else, or one too large to count exactly, is refused naming `name`. */
function parseCount(value: string, name: string, min = 0): number {
  const n = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || !Number.isInteger(n)) throw new ConfigError(`${name}: '${value}' is not a whole number (${min} or more)`);
  if (!Number.isSafeInteger(n)) throw new ConfigError(`${name}: '${value.trim()}' is too large (at most ${Number.MAX_SAFE_INTEGER})`);
  return atLeast(n, min, name);
}

function atLeast(value: number, min: number, name: string): number {
  if (value < min) throw new ConfigError(`${name}: ${value} is too small (at least ${min})`);
  return value;
}

/** A duration of at least `minMs`, refused in the terms it was given (`'0s' is too short (at least 1s)`). */
function atLeastMs(ms: number, minMs: number, name: string, given: string): number {
  if (ms < minMs) throw new ConfigError(`${name}: '${given.trim()}' is too short (at least ${minMs % 1000 === 0 ? `${minMs / 1000}s` : `${minMs}ms`})`);
  return ms;
}

export interface SettingsOverrides {
  pollInterval?: string;
  idleTimeout?: string;
  /** How long one command an agent runs (bash, execute_code, a test run, a check) may take. */
  commandTimeout?: string;
  maxTurns?: string;
  maxRevisions?: string;
  maxQuestions?: string;
  tokenBudget?: string;
  maxPipelineSteps?: string;
  tokenBudgetPipeline?: string;
  maxAttempts?: string;
  sandbox?: string;
  /** `true` (every stage) or a comma-separated list of stages whose processes may use the network. */
  allowNetwork?: string | boolean;
}

const SANDBOX_MODES: readonly SandboxMode[] = ['auto', 'required', 'off'];

/** The sandbox policy from SANDBOX, ALLOW_NETWORK, SANDBOX_PASS_ENV and SANDBOX_* limits (SANDBOX_TMP_MB: /tmp and /dev/shm), then flags. */
function loadSandboxPolicy(env: NodeJS.ProcessEnv, flags: SettingsOverrides, stages: StageRegistry): SandboxPolicy {
  const modeName = flags.sandbox !== undefined ? '--sandbox' : 'AUTOTEAM_SANDBOX';
  const mode = (flags.sandbox ?? env.AUTOTEAM_SANDBOX ?? 'auto').trim().toLowerCase();
  if (!SANDBOX_MODES.includes(mode as SandboxMode)) {
    throw new ConfigError(`${modeName}: '${mode}' is not one of ${SANDBOX_MODES.join(', ')}`);
  }
  const networkName = flags.allowNetwork !== undefined ? '--allow-network' : 'AUTOTEAM_ALLOW_NETWORK';
  const rawNetwork = String(flags.allowNetwork ?? env.AUTOTEAM_ALLOW_NETWORK ?? '').trim().toLowerCase();
  let network: string[] = [];
  if (['1', 'true', '*', 'all'].includes(rawNetwork)) network = ['*'];
  else if (rawNetwork && rawNetwork !== '0' && rawNetwork !== 'false' && rawNetwork !== 'none') {
    network = rawNetwork.split(',').map((stage) => stage.trim()).filter(Boolean);
    // Every stage of the team, and the general tasks' and the lead's processes.
    const known = [...stages.names(), 'general', 'lead'];
    const unknown = network.filter((stage) => !known.includes(stage));
    if (unknown.length) throw new ConfigError(`${networkName}: unknown stage ${unknown.join(', ')} (all, or stages: ${known.join(', ')})`);
  }
  const limit = (name: string, fallback: number, min: number) => {
    const raw = env[name];
    return raw === undefined || raw === '' ? fallback : parseCount(raw, name, min);
  };
  const defaults = DEFAULT_SANDBOX_POLICY.limits;
  const passEnv = (env.SANDBOX_PASS_ENV ?? '').split(',').map((name) => name.trim()).filter(Boolean);
  const badName = passEnv.find((name) => !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name));
  if (badName) throw new ConfigError(`SANDBOX_PASS_ENV: '${badName}' is not a variable name`);
  const secret = passEnv.find((name) => secretValues({ [name]: 'x'.repeat(8) }).length > 0);
  if (secret) throw new ConfigError(`SANDBOX_PASS_ENV: ${secret} looks like a secret; the code the agents run must not see it`);
  return {
    mode: mode as SandboxMode,
    network,
    passEnv,
    limits: {
      memoryMb: limit('SANDBOX_MEMORY_MB', defaults.memoryMb, 64),
      fileSizeMb: limit('SANDBOX_FILE_MB', defaults.fileSizeMb, 1),
      processes: limit('SANDBOX_PROCESSES', defaults.processes, 8),
      cpuSeconds: limit('SANDBOX_CPU_SECONDS', defaults.cpuSeconds, 1),
      tmpMb: limit('SANDBOX_TMP_MB', defaults.tmpMb, 1),
    },
  };
}

/** Settings from the environment (POLL_INTERVAL, IDLE_TIMEOUT, …), then flags, over the defaults; `stages` names the stages ALLOW_NETWORK may name. */
export function loadTeammateSettings(env: NodeJS.ProcessEnv = process.env, flags: SettingsOverrides = {}, stages: StageRegistry = BUILTIN_REGISTRY): TeammateSettings {
  /** The value and the name to blame in an error: the flag the person typed, else the variable. */
  const pick = (flag: string | undefined, option: string, envName: string): [string | undefined, string] =>
    flag !== undefined ? [flag, option] : [env[envName], envName];
  const settings: TeammateSettings = { ...DEFAULT_TEAMMATE_SETTINGS, runtime: { ...DEFAULT_RUNTIME_SETTINGS } };
  const [poll, pollName] = pick(flags.pollInterval, '--poll-interval', 'POLL_INTERVAL');
  if (poll) settings.pollMs = atLeastMs(parseWait(poll, pollName), 50, pollName, poll);
  const [idle, idleName] = pick(flags.idleTimeout, '--idle-timeout', 'IDLE_TIMEOUT');
  if (idle) settings.idleTimeoutMs = parseWait(idle, idleName);
  const [command, commandName] = pick(flags.commandTimeout, '--command-timeout', 'COMMAND_TIMEOUT');
  if (command) settings.commandTimeoutMs = atLeastMs(parseWait(command, commandName), 1000, commandName, command);
  const [turns, turnsName] = pick(flags.maxTurns, '--max-turns', 'MAX_TURNS');
  if (turns) settings.maxTurns = parseCount(turns, turnsName, 1);
  const [budget, budgetName] = pick(flags.tokenBudget, '--token-budget', 'TOKEN_BUDGET');
  if (budget) settings.tokenBudget = parseCount(budget, budgetName, 1000);
  const [revisions, revisionsName] = pick(flags.maxRevisions, '--max-revisions', 'MAX_REVISIONS');
  if (revisions) settings.runtime.maxRevisions = parseCount(revisions, revisionsName);
  const [questions, questionsName] = pick(flags.maxQuestions, '--max-questions', 'MAX_QUESTIONS');
  if (questions) settings.runtime.maxQuestions = parseCount(questions, questionsName);
  const [steps, stepsName] = pick(flags.maxPipelineSteps, '--max-pipeline-steps', 'MAX_PIPELINE_STEPS');
  if (steps) settings.runtime.maxPipelineSteps = parseCount(steps, stepsName, 1);
  const [pipelineBudget, pipelineBudgetName] = pick(flags.tokenBudgetPipeline, '--token-budget-pipeline', 'TOKEN_BUDGET_PIPELINE');
  if (pipelineBudget) settings.runtime.pipelineTokenBudget = parseCount(pipelineBudget, pipelineBudgetName, 1000);
  const [attempts, attemptsName] = pick(flags.maxAttempts, '--max-attempts', 'MAX_ATTEMPTS');
  if (attempts) settings.maxAttempts = parseCount(attempts, attemptsName, 1);
  settings.sandbox = loadSandboxPolicy(env, flags, stages);
  // The first wait after an unfinished attempt; it doubles up to five minutes (or this, if longer).
  const backoff = env.RETRY_BACKOFF;
  if (backoff) {
    settings.retryBaseMs = atLeastMs(parseWait(backoff, 'RETRY_BACKOFF'), 50, 'RETRY_BACKOFF', backoff);
    settings.retryMaxMs = Math.max(DEFAULT_TEAMMATE_SETTINGS.retryMaxMs, settings.retryBaseMs);
  }
  const requestTokens = env.MAX_REQUEST_TOKENS;
  if (requestTokens) settings.maxRequestTokens = parseCount(requestTokens, 'MAX_REQUEST_TOKENS', 1000);
  const inboxMb = env.MAX_INBOX_MB;
  if (inboxMb) settings.maxInboxBytes = parseCount(inboxMb, 'MAX_INBOX_MB', 1) * 1024 * 1024;
  const answer = env.ANSWER_TIMEOUT;
  if (answer) settings.runtime.answerTimeoutMs = parseWait(answer, 'ANSWER_TIMEOUT');
  return settings;
}
