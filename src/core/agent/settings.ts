import { ConfigError } from '../errors.js';
import { DEFAULT_RUNTIME_SETTINGS, type RuntimeSettings } from '../tools/tool.js';

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
  commandTimeoutMs: number;
  maxOutputChars: number;
  runtime: RuntimeSettings;
}

export const DEFAULT_TEAMMATE_SETTINGS: TeammateSettings = {
  pollMs: 5_000,
  idleTimeoutMs: 60_000,
  leaseMs: 30_000,
  maxTurns: 30,
  tokenBudget: 60_000,
  maxTokens: 4_096,
  commandTimeoutMs: 30_000,
  maxOutputChars: 8_000,
  runtime: DEFAULT_RUNTIME_SETTINGS,
};

/** Parses `500`, `500ms`, `5s`, `2m` into milliseconds; a bare number is milliseconds if ≥ 100, else seconds. */
export function parseDuration(value: string, name: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*$/.exec(value);
  if (!match) throw new ConfigError(`${name}: '${value}' is not a duration (examples: 500ms, 5s, 2m)`);
  const amount = Number(match[1]);
  const unit = match[2] ?? (amount >= 100 ? 'ms' : 's');
  return Math.round(unit === 'ms' ? amount : unit === 's' ? amount * 1000 : amount * 60_000);
}

function parseCount(value: string, name: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new ConfigError(`${name}: '${value}' is not a whole number`);
  return n;
}

function atLeast(value: number, min: number, name: string): number {
  if (value < min) throw new ConfigError(`${name}: ${value} is too small (at least ${min})`);
  return value;
}

export interface SettingsOverrides {
  pollInterval?: string;
  idleTimeout?: string;
  maxTurns?: string;
  maxRevisions?: string;
  maxQuestions?: string;
  tokenBudget?: string;
  maxPipelineSteps?: string;
  tokenBudgetPipeline?: string;
}

/** Settings from the environment (POLL_INTERVAL, IDLE_TIMEOUT, …), then flags, over the defaults. */
export function loadTeammateSettings(env: NodeJS.ProcessEnv = process.env, flags: SettingsOverrides = {}): TeammateSettings {
  const pick = (flag: string | undefined, envName: string) => flag ?? env[envName];
  const settings: TeammateSettings = { ...DEFAULT_TEAMMATE_SETTINGS, runtime: { ...DEFAULT_RUNTIME_SETTINGS } };
  const poll = pick(flags.pollInterval, 'POLL_INTERVAL');
  if (poll) settings.pollMs = atLeast(parseDuration(poll, 'POLL_INTERVAL'), 50, 'POLL_INTERVAL (ms)');
  const idle = pick(flags.idleTimeout, 'IDLE_TIMEOUT');
  if (idle) settings.idleTimeoutMs = parseDuration(idle, 'IDLE_TIMEOUT');
  const turns = pick(flags.maxTurns, 'MAX_TURNS');
  if (turns) settings.maxTurns = atLeast(parseCount(turns, 'MAX_TURNS'), 1, 'MAX_TURNS');
  const budget = pick(flags.tokenBudget, 'TOKEN_BUDGET');
  if (budget) settings.tokenBudget = atLeast(parseCount(budget, 'TOKEN_BUDGET'), 1000, 'TOKEN_BUDGET');
  const revisions = pick(flags.maxRevisions, 'MAX_REVISIONS');
  if (revisions) settings.runtime.maxRevisions = parseCount(revisions, 'MAX_REVISIONS');
  const questions = pick(flags.maxQuestions, 'MAX_QUESTIONS');
  if (questions) settings.runtime.maxQuestions = parseCount(questions, 'MAX_QUESTIONS');
  const steps = pick(flags.maxPipelineSteps, 'MAX_PIPELINE_STEPS');
  if (steps) settings.runtime.maxPipelineSteps = atLeast(parseCount(steps, 'MAX_PIPELINE_STEPS'), 1, 'MAX_PIPELINE_STEPS');
  const pipelineBudget = pick(flags.tokenBudgetPipeline, 'TOKEN_BUDGET_PIPELINE');
  if (pipelineBudget) {
    settings.runtime.pipelineTokenBudget = atLeast(parseCount(pipelineBudget, 'TOKEN_BUDGET_PIPELINE'), 1000, 'TOKEN_BUDGET_PIPELINE');
  }
  const answer = env.ANSWER_TIMEOUT;
  if (answer) settings.runtime.answerTimeoutMs = parseDuration(answer, 'ANSWER_TIMEOUT');
  return settings;
}
