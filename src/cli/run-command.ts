import path from 'node:path';
import readline from 'node:readline';
import type { TeammateSettings } from '../core/agent/settings.js';
import { parseDuration } from '../core/agent/settings.js';
import type { Stage, Task, TaskUsage } from '../core/board/schemas.js';
import { openBoard } from '../core/board/board.js';
import { costWith, type ModelSpec } from '../core/model/factory.js';
import { formatCost, type PriceTable } from '../core/model/pricing.js';
import { type LeadApi, LeadSession, type LeadSnapshot } from '../core/lead/session.js';
import { ConfigError, FATAL_MODEL_CODES, serializeError } from '../core/errors.js';
import { modelSpecs, type ProjectConfig } from '../core/config/project-config.js';
import type { ModelOverrides } from '../core/model/config.js';
import { checkRequirement, type PipelineState } from '../core/stages/pipeline.js';
import { approvalOf } from '../core/stages/pipeline-status.js';
import type { TraceSummary } from '../core/trace/summary.js';
import { formatDuration, formatTaskLine, formatUsage } from '../frontend/format.js';
import { activityView, describeEvent, indentContinuation } from '../frontend/activity.js';
import { serveWeb } from './web-command.js';
import type { WebBoard } from '../web/server.js';

export interface RunCommandOptions {
  dir: string;
  requirement: string;
  auto: boolean;
  json: boolean;
  /** `text` (lines while it runs, then the summary), `json` (the summary alone) or `stream-json` (an event a line, then the result). */
  outputFormat?: 'text' | 'json' | 'stream-json';
  startStage?: Stage;
  timeout?: string;
  settings: TeammateSettings;
  /** `--repo <path>`, or false for `--no-worktree`. */
  repo?: string | false;
  /** A postgres:// board (absent: the file board in `dir`). */
  board?: string;
  /** --provider / --model. */
  model?: ModelOverrides;
  /** The models to run on, already resolved (a library caller's own); otherwise from the flags, env and config. */
  models?: { model: ModelSpec; models: Record<string, ModelSpec> };
  /** autoteam.config.json of the board folder. */
  project: ProjectConfig;
  /** `--web[=PORT]`: the web board served while the run lasts (its address on stderr). */
  web?: { port: number };
}

export interface RunSummary {
  pipeline: number;
  status: string;
  reason?: string;
  requirement: string;
  model: string;
  tasks: Array<{ id: number; stage: string | null; revision: number; owner: string | null; status: string; result: string | null }>;
  requirements: number;
  questions: number;
  files: string[];
  workspace: string;
  /** Repository mode: the pipeline's branch, the commit it started from, and the approval's commit. */
  git?: { repo: string; branch: string; base: string; commit: string | null; remote?: string };
  revisions: number;
  /** The acceptance criteria and, once approved, the reviewer's verdict and evidence for each. */
  criteria: Array<{ id: string; criterion: string; verify: string; met: boolean | null; evidence: string | null }>;
  /** Checks the reviewers ran (run_check) over all reviews, and how many passed. */
  checks: { run: number; passed: number };
  /** Model calls and tokens of this pipeline (the budgets count these). */
  usage: TaskUsage;
  behaviour: TraceSummary['roles'];
  tokens: { input: number; output: number; cacheRead: number };
  /** Dollars at the model's list price (null: no known price, e.g. a local model or the offline one). */
  cost: number | null;
  wallMs: number;
}

const DISK_CODES = new Set(['ENOSPC', 'EDQUOT', 'EROFS']);

/** `autoteam run`: start the team, post one requirement, follow it to the end, print a summary. */
export async function runHeadless(options: RunCommandOptions): Promise<number> {
  // Before anything starts: a refused requirement leaves no board and no threads behind.
  checkRequirement(options.requirement);
  const timeoutMs = runTimeout(options.timeout);
  const { project } = options;
  for (const warning of project.warnings) console.error(`autoteam: ${project.file}: ${warning}`);
  const { model: spec, models } = options.models ?? modelSpecs(process.env, project, options.model ?? {});
  const board = await openBoard(options.board ?? options.dir, options.dir, { maxInboxBytes: options.settings.maxInboxBytes });
  const session: LeadApi = new LeadSession({ rootDir: options.dir, model: spec, models, settings: options.settings, auto: options.auto, board, ...(options.repo !== undefined ? { repo: options.repo } : {}) });
  const started = Date.now();
  const since = new Date(started).toISOString();
  const format = options.outputFormat ?? (options.json ? 'json' : 'text');
  // Model text on one line, two columns in from the terminal's width (the lines are indented).
  const view = activityView(() => (process.stdout.columns ? process.stdout.columns - 2 : undefined));
  const log = (line: string) => {
    if (format === 'text') console.log(line);
  };
  // One JSON object a line while it runs: init, the board's events, then the result (Claude Code's
  // stream-json shape). Events the log delivers before the post returns wait behind init.
  let initialised = false;
  const early: Array<Record<string, unknown>> = [];
  const stream = (record: Record<string, unknown>) => {
    if (format !== 'stream-json') return;
    if (record.type === 'system' && record.subtype === 'init') {
      initialised = true;
      for (const held of [record, ...early.splice(0)]) console.log(JSON.stringify(held));
      return;
    }
    if (!initialised) early.push(record);
    else console.log(JSON.stringify(record));
  };
  // Why the run stopped waiting before the pipeline ended: no one left to answer, or Ctrl+C.
  const stop = new AbortController();
  let stopReason: string | null = null;
  const stopWith = (reason: string) => {
    if (stopReason !== null) return;
    stopReason = reason;
    stop.abort();
  };
  const input = !options.auto ? readline.createInterface({ input: process.stdin, terminal: false }) : null;
  const typed: string[] = [];
  let inputEnded = false;
  const NO_ANSWER = 'the analyst asked a question but standard input ended (answer on stdin, one line per question, or use --auto)';
  input?.on('line', (line) => {
    if (session.pendingQuestions().length > 0) void session.answer(line).catch(() => undefined);
    else typed.push(line);
  });
  input?.on('close', () => {
    inputEnded = true;
    if (session.pendingQuestions().length > 0) stopWith(NO_ANSWER);
  });
  // A key the endpoint rejects, an unknown model or an unreachable endpoint will not fix itself:
  // the run stops at once with that one line instead of waiting out its timeout.
  const fatal = new AbortController();
  let fatalError: { code: string; message: string } | null = null;
  session.subscribe((event) => {
    if (event.type === 'teammate' && event.event.type === 'error' && FATAL_MODEL_CODES.has(event.event.error.code) && !fatalError) {
      fatalError = event.event.error;
      fatal.abort();
    }
    // A full or read-only disk will not heal while the run waits: stop with that one line.
    const failure = event.type === 'teammate' && event.event.type === 'error' ? event.event.error : event.type === 'error' ? event : null;
    if (failure && DISK_CODES.has(failure.code)) stopWith(`the board's disk refused a write (${failure.code}): ${failure.message}`);
    if (event.type === 'team') stream(event.event);
    else if (event.type === 'teammate' && event.event.type === 'error') stream({ type: 'error', agent: event.event.name, code: event.event.error.code, message: event.event.error.message });
    // Leaving at the end of the run is expected; a thread stopped or dead is news.
    const line = event.type === 'teammate_exit' && event.exit.kind === 'left' ? null : describeEvent(event, view, (id) => session.task(id)?.subject);
    if (line) log(`  ${indentContinuation(line.text)}`);
    // A teammate that died leaves its role without anyone: the run cannot finish, and says why at once.
    if (event.type === 'teammate_exit' && event.exit.kind === 'crashed') {
      stopWith(`${event.exit.name} died (${event.exit.reason})${event.exit.crashLog ? `; details in ${event.exit.crashLog}` : ''}`);
    }
    if (event.type === 'question' && !options.auto) {
      if (typed.length) void session.answer(typed.shift()!).catch(() => undefined);
      else if (inputEnded) stopWith(NO_ANSWER);
    }
  });
  // Ctrl+C or a kill: stop waiting, hand the work back (session.close), and say so.
  const onSignal = (signal: NodeJS.Signals) => stopWith(`interrupted (${signal}); unfinished tasks were handed back to the board`);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  // Output piped into something that stopped reading (`| head`): stop as on Ctrl+C, not with a stack
  // trace (after the run, stopping again changes nothing).
  const onOutputError = (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    stopWith('interrupted (its output was closed); unfinished tasks were handed back to the board');
  };
  process.stdout.on('error', onOutputError);
  process.stderr.on('error', onOutputError);

  const giveUp = AbortSignal.timeout(timeoutMs);
  const before = session.snapshot();
  log(`autoteam run — ${session.modelLabel}${before.board.location === before.board.rootDir ? '' : ` · board ${session.where}`}`);
  const open = before.tasks.filter((task) => task.status === 'pending' || task.status === 'in_progress');
  if (open.length > 0) {
    log(`note: the board already has ${open.length} open task${open.length === 1 ? '' : 's'} (${open.slice(0, 5).map((t) => `#${t.id}`).join(', ')}${open.length > 5 ? ', …' : ''}); the team works those too while this run lasts`);
  }
  let state: PipelineState;
  let pipeline: number;
  let web: WebBoard | null = null;
  try {
    await session.start(project.team);
    if (options.web) web = await serveWeb(session, { port: options.web.port, flag: '--web' }, (line) => console.error(line));
    const first = await session.post(options.requirement, options.startStage);
    pipeline = first.pipeline!;
    log(`posted pipeline #${pipeline}: task #${first.id} (${first.stage}) — ${first.subject}`);
    stream({ type: 'system', subtype: 'init', pipeline, task: first.id, model: session.modelIds, board: session.where });
    state = await session.waitForPipeline(pipeline, AbortSignal.any([giveUp, fatal.signal, stop.signal]));
    if (state.status === 'active') state = { ...state, status: 'failed', reason: await stoppedEarly(session, pipeline, stopReason, giveUp.aborted && !fatal.signal.aborted ? timeoutMs : null) };
  } finally {
    input?.close();
    // The pages get the pipeline's end before the server goes (the run's summary says the rest).
    await web?.close('the run ended');
    await session.close(3_000);
    await board.close();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  state = { ...session.stateOf(pipeline), ...(state.reason ? { reason: state.reason } : {}), status: state.status };

  if (fatalError) {
    const { code, message } = fatalError as { code: string; message: string };
    console.error(`autoteam: ${message} (${code})`);
    return 2;
  }
  const after = session.snapshot();
  const summary = summarize(session, after, state, options.requirement, since, Date.now() - started, spec, options.settings.prices);
  // A task file that does not parse is left out of everything above (its usage included): say so.
  for (const problem of after.board.problems) console.error(`autoteam: skipped ${problem}`);
  // `run` follows its own pipeline; work it found on the board and did not see end is not lost.
  const unfinished = after.pipelines.filter(({ id, status }) => id !== pipeline && status === 'active').map(({ id }) => `#${id}`);
  if (unfinished.length) log(`note: pipeline ${unfinished.join(', ')} is still active on the board: a lead (autoteam) or a worker there goes on with it`);
  if (format === 'json') console.log(JSON.stringify(summary, null, 2));
  else if (format === 'stream-json') stream({ type: 'result', subtype: state.status === 'approved' ? 'success' : 'error', is_error: state.status !== 'approved', ...summary });
  else printSummary(summary, state.tasks, session.modelLabel);
  if ((stopReason as string | null)?.startsWith('interrupted')) return 130;
  return state.status === 'approved' ? 0 : 1;
}

/** `--timeout`, 10 minutes by default. A bare number is refused: is `--timeout 600` ten minutes or 0.6 s? */
function runTimeout(value: string | undefined): number {
  if (value === undefined) return 10 * 60_000;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) throw new ConfigError(`--timeout: '${value}' needs a unit (examples: 90s, 10m, 500ms)`);
  const ms = parseDuration(value, '--timeout');
  if (ms <= 0) throw new ConfigError(`--timeout: '${value}' is no time at all (examples: 90s, 10m)`);
  return ms;
}

/**
 * Why the run ended with its pipeline still active, as the summary says it. A timeout cancels the
 * pipeline, so the board agrees that the run failed; any other stop (no answer on stdin, a full disk,
 * a signal) leaves it open for the next lead in this folder, and says so.
 */
async function stoppedEarly(session: LeadApi, pipeline: number, stopReason: string | null, timedOutAfterMs: number | null): Promise<string> {
  if (stopReason === null && timedOutAfterMs !== null) {
    const timedOut = `timed out after ${formatDuration(timedOutAfterMs)}`;
    try {
      await session.cancel(pipeline, `autoteam run ${timedOut}`);
      return `${timedOut}; pipeline #${pipeline} cancelled (autoteam retry ${pipeline} starts it again from the stage it stopped at)`;
    } catch (error) {
      return `${timedOut}; pipeline #${pipeline} is left open on the board (cancelling it failed: ${serializeError(error).message})`;
    }
  }
  // A model error no retry will fix ends the run with its own line and exit 2; the task went back.
  if (stopReason === null) return 'stopped by a model error';
  return `${stopReason}; pipeline #${pipeline} is left open on the board (a lead here goes on with it, autoteam cancel ${pipeline} drops it)`;
}

function summarize(session: LeadApi, snapshot: LeadSnapshot, state: PipelineState, requirement: string, since: string, wallMs: number, recorded: ModelSpec, prices?: PriceTable): RunSummary {
  // Only this pipeline's work: the team may also have picked up other open tasks on the board.
  const ids = new Set(state.tasks.map((task) => task.id));
  const trace = session.workSummary(ids, since);
  // Requirements and Q&A are carried from task to task: the most any task of the pipeline holds.
  const most = (count: (task: Task) => number) => Math.max(0, ...state.tasks.map(count));
  const files = new Set<string>();
  for (const task of state.tasks) for (const file of task.artifacts.files ?? []) files.add(file.path);
  const last = state.tasks.at(-1);
  // The task that approved the pipeline: its verdicts on the acceptance criteria, and the commit it made.
  const approval = approvalOf(state.tasks);
  const verdicts = approval?.artifacts.criteriaVerdicts ?? [];
  const checks = state.tasks.flatMap((task) => task.artifacts.checks ?? []);
  const git = approval?.artifacts.git ?? last?.artifacts.git;
  return {
    pipeline: state.id,
    status: state.status,
    ...(state.reason ? { reason: state.reason } : {}),
    requirement,
    model: session.modelIds,
    tasks: state.tasks.map((task) => ({ id: task.id, stage: task.stage, revision: task.revision, owner: task.owner, status: task.status, result: task.result })),
    requirements: most((task) => Object.keys(task.artifacts.requirements ?? {}).length),
    questions: most((task) => (task.artifacts.qa ?? []).length),
    files: [...files].sort(),
    workspace: path.resolve(snapshot.pipelines.find((view) => view.id === state.id)?.workspace ?? path.join(snapshot.board.rootDir, 'workspace', String(state.id))),
    ...(git ? { git: { repo: git.repo, branch: git.branch, base: git.base, commit: git.commit ?? null, ...(git.remote ? { remote: git.remote } : {}) } } : {}),
    revisions: state.revisions,
    criteria: (last?.artifacts.criteria ?? []).map((criterion) => {
      const verdict = verdicts.find((v) => v.id === criterion.id);
      return { ...criterion, met: verdict ? verdict.met : null, evidence: verdict?.evidence ?? null };
    }),
    checks: { run: checks.length, passed: checks.filter((check) => check.ok).length },
    usage: state.usage,
    behaviour: trace.roles,
    tokens: { input: trace.inputTokens, output: trace.outputTokens, cacheRead: trace.cacheReadTokens },
    cost: costWith(recorded, { inputTokens: trace.inputTokens, outputTokens: trace.outputTokens, cacheReadTokens: trace.cacheReadTokens }, prices),
    wallMs,
  };
}

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** `label`: the models as a person reads them (the summary's `model` is their ids). */
function printSummary(summary: RunSummary, tasks: readonly Task[], label: string): void {
  console.log('');
  console.log(`pipeline #${summary.pipeline}: ${summary.status.toUpperCase()}${summary.reason ? ` — ${summary.reason}` : ''}`);
  for (const task of tasks) console.log(`  ${formatTaskLine(task)}`);
  if (summary.behaviour.length) console.log('behaviour per role:');
  for (const role of summary.behaviour) {
    const tools = Object.entries(role.tools)
      .sort((a, b) => b[1] - a[1])
      .map(([name, count]) => `${name} ${count}`)
      .join(', ');
    console.log(`  ${role.role} (${role.agents.join(', ')}): ${role.modelCalls} model call${role.modelCalls === 1 ? '' : 's'}; ${tools || 'no tools'}`);
  }
  console.log(
    `requirements: ${summary.requirements} · questions: ${summary.questions} · files: ${summary.files.length ? `${summary.files.join(', ')} (${summary.workspace})` : 'none'} · revisions: ${summary.revisions}`,
  );
  if (summary.git) {
    const { branch, base, commit, remote } = summary.git;
    // On a remote the branch is there, pushed: merging it is the remote's business.
    const next = commit ? ` · commit ${commit.slice(0, 12)}${remote ? ` on ${remote}` : ` (autoteam diff|merge|discard ${summary.pipeline})`}` : ' · nothing committed';
    console.log(`branch: ${branch} from ${base.slice(0, 12)}${next}`);
  }
  if (summary.criteria.length) {
    console.log('acceptance criteria:');
    for (const c of summary.criteria) {
      const mark = c.met === true ? '✓' : c.met === false ? '✗' : '·';
      console.log(`  ${mark} [${c.id}] ${clip(c.criterion, 72)}${c.evidence ? ` — ${clip(c.evidence, 60)}` : ''}`);
    }
  }
  console.log(`checks: ${summary.checks.passed}/${summary.checks.run} passed · pipeline #${summary.pipeline}: ${formatUsage(summary.usage)}`);
  console.log(
    `tokens: ${summary.tokens.input.toLocaleString('en-US')} in / ${summary.tokens.output.toLocaleString('en-US')} out${summary.tokens.cacheRead ? ` / ${summary.tokens.cacheRead.toLocaleString('en-US')} cached` : ''}${summary.cost !== null ? ` · ${formatCost(summary.cost)}` : ''} · wall time ${formatDuration(summary.wallMs)} · ${label}`,
  );
}
