import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import type { TeammateSettings } from '../core/agent/settings.js';
import type { Member, Stage } from '../core/board/schemas.js';
import { roleCovered } from '../core/board/team-registry.js';
import { openBoard } from '../core/board/board.js';
import { REFUSED_WRITE_CODES } from '../core/board/atomic-io.js';
import type { ModelSpec } from '../core/model/factory.js';
import { type LeadApi, LeadSession } from '../core/lead/session.js';
import { AUTO_MERGE_WITHOUT_BRANCHES } from '../core/lead/repository.js';
import { type RoleCount, startingTeam } from '../core/lead/team-size.js';
import { ConfigError, FATAL_MODEL_CODES, serializeError } from '../core/errors.js';
import { modelSpecs, type ProjectConfig } from '../core/config/project-config.js';
import type { ModelOverrides } from '../core/model/config.js';
import { replayBoardProblem } from '../core/model/recording.js';
import type { PipelineState } from '../core/stages/pipeline.js';
import { StdinAnswers } from './run-answers.js';
import { checkRequirement } from '../core/stages/requirement.js';
import { isOpen } from '../core/stages/pipeline-status.js';
import { formatDuration, postedLine } from '../frontend/format.js';
import { onHangup, onStopSignals } from '../frontend/quit.js';
import { activityView, describeSessionEvent, indentContinuation } from '../frontend/activity.js';
import { runTimeout, watchStuck } from './run-start.js';
import { serveWeb } from './web-command.js';
import type { WebBoard } from '../web/server.js';
import { endLine, type McpTrouble, printOverall, printSummary, type RunSummary, summarize } from './run-summary.js';
import { sayConfigWarnings } from './board-options.js';

export type { RunSummary } from './run-summary.js';

export interface RunCommandOptions {
  dir: string;
  /** One pipeline each, worked at once by one team (`run "A" "B"`, `--file`). */
  requirements: string[];
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
  /** `--analysts N`, `--engineers N`, `--reviewers N`. */
  counts?: RoleCount[];
  /** The requirements came from standard input (`--file -`), so no answers can. */
  stdinHeldRequirements?: boolean;
}


/**
 * `autoteam run`: start the team, post the requirements (a pipeline each), follow them to the end at
 * once, print a summary of each (and an overall line under several). Exit 0 when every one was approved.
 */
export async function runHeadless(options: RunCommandOptions): Promise<number> {
  // Before anything starts: a refused requirement or team size leaves no board and no threads behind.
  if (options.requirements.length === 0) throw new ConfigError('a run needs at least one requirement');
  for (const requirement of options.requirements) checkRequirement(requirement);
  const timeoutMs = runTimeout(options.timeout);
  const { project } = options;
  // A role the sizes leave empty needs a live worker of it on the board: with no board there yet, refused before one is made.
  const teamWith = (members: readonly Member[]) => startingTeam(project, options.counts ?? [], { strict: true, say: (line) => console.error(line), covered: (role) => roleCovered(members, role), ...(options.startStage ? { from: options.startStage } : {}) });
  if (!options.board && !fs.existsSync(path.join(options.dir, '.team', 'config.json'))) teamWith([]);
  const { model: spec, models } = options.models ?? modelSpecs(process.env, project, options.model ?? {});
  const board = await openBoard(options.board ?? options.dir, options.dir, { maxInboxBytes: options.settings.maxInboxBytes });
  // Closed once the run has reported: its summaries read the board's log (the work of other processes).
  try {
    const members = board.registry.read().members;
    const team = teamWith(members);
    sayConfigWarnings(project, team, (role) => roleCovered(members, role));
    // Refused before anything is posted: a replay that cannot find its calls would leave its pipeline open.
    const replayProblem = spec.kind === 'replay' ? replayBoardProblem(spec.dir, board.tasks.list()) : null;
    if (replayProblem) throw new ConfigError(replayProblem);
    const session: LeadApi = new LeadSession({ rootDir: options.dir, model: spec, models, settings: options.settings, auto: options.auto, board, ...(options.repo !== undefined ? { repo: options.repo } : {}) });
    const started = Date.now();
    const since = new Date(started).toISOString();
    const format = options.outputFormat ?? (options.json ? 'json' : 'text');
    // Model text on one line, two columns in from the terminal's width (the lines are indented).
    const view = activityView(() => (process.stdout.columns ? process.stdout.columns - 2 : undefined), { tagPipelines: options.requirements.length > 1 ? 'always' : true });
    // Held until the session has started: a run refused its start (another lead holds the board) says
    // only why, not the heading of a run that never was.
    let held: string[] | null = [];
    const log = (line: string) => {
      if (format !== 'text') return;
      if (held) held.push(line);
      else console.log(line);
    };
    // A note for the person: with the activity in text, on stderr beside JSON (which has no field for it).
    const note = (line: string) => (format === 'text' ? log(line) : console.error(line));
    // One JSON object a line while it runs: init, the board's events, then the result (Claude Code's
    // stream-json shape). Events the log delivers before the post returns wait behind init.
    let initialised = false;
    const early: Array<Record<string, unknown>> = [];
    const stream = (record: Record<string, unknown>) => {
      if (format !== 'stream-json') return;
      if (record.type === 'system' && record.subtype === 'init') {
        initialised = true;
        for (const line of [record, ...early.splice(0)]) console.log(JSON.stringify(line));
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
    const answers = new StdinAnswers(session, log);
    const { pipelines, typed } = answers;
    let inputEnded = false;
    let hinted = false;
    // Said of every pipeline the stop leaves open: the question it asked itself, or else the one that stopped the run.
    let unanswered = false;
    // Questions the log shows asked and not yet answered, by pipeline: the log has one a moment before
    // the lead's inbox does (the asker tells the log, then sends the message).
    const askedInLog = new Map<number, { from: string; pipeline: number; questionId: string }>();
    session.subscribe((event) => {
      if (event.type !== 'team' || !event.event.pipeline) return;
      const { type, pipeline, agent } = event.event;
      if (type === 'question_asked' && agent) askedInLog.set(pipeline, { from: agent, pipeline, questionId: event.event.questionId });
      if (type === 'question_answered' && askedInLog.get(pipeline)?.questionId === event.event.questionId) askedInLog.delete(pipeline);
    });
    const noAnswer = (pipeline?: number) => {
      const pending = session.pendingQuestions();
      const own = pending.filter((question) => !answers.isOlder(question.pipeline));
      const asked = pending.find((question) => question.pipeline === pipeline) ?? (pipeline ? askedInLog.get(pipeline) : undefined) ?? own[0] ?? pending[0];
      // One of a pipeline at work before the run: the run's own wait behind it (one analyst), and it takes `#N` lines.
      const earlier = asked && answers.isOlder(asked.pipeline) ? ` (at work before this run; the run's pipelines wait behind it, and only a line '#${asked.pipeline} <answer>' answers it)` : '';
      const whose = asked ? `${asked.from}'s question${asked.pipeline ? ` for pipeline #${asked.pipeline}${earlier}` : ''}` : 'a question';
      const how = options.stdinHeldRequirements ? 'standard input held the requirements (--file -): use --auto, or give them in a file to answer on stdin' : 'answer on stdin, one line per question, or use --auto';
      return `standard input ended with ${whose} unanswered (${how})`;
    };
    const stopUnanswered = () => {
      if (stopReason !== null) return;
      unanswered = true;
      stopWith(noAnswer());
    };
    input?.on('line', (line) => {
      // A blank line answers nothing (as in --file), nor does a pipeline's number with no answer after it.
      if (!line.trim()) return;
      if (/^#\d+\s*$/.test(line.trim())) return log(`note: standard input's line '${line.trim()}' has no answer after the pipeline's number: skipped`);
      answers.typedLine(line);
    });
    input?.on('close', () => {
      inputEnded = true;
      if (session.pendingQuestions().length > 0) stopUnanswered();
    });
    // A model error no retry fixes (FATAL_MODEL_CODES): the run stops at once with its one line, not at its timeout.
    const fatal = new AbortController();
    let fatalError: { code: string; message: string } | null = null;
    // An MCP server that failed, exited or is gone, per teammate, last state: said again under the
    // summary, where a person looks last (the run may still be approved without it).
    const mcpTrouble = new Map<string, McpTrouble & { pipeline: number | null }>();
    let shutDown = 0;
    session.subscribe((event) => {
      if (event.type === 'team' && event.event.type === 'mcp_server' && event.event.state !== 'started' && event.event.state !== 'stopped') {
        const { server, state, detail, agent, pipeline } = event.event;
        mcpTrouble.set(`${server}\0${agent ?? ''}`, { server, agent: agent ?? null, state, detail, pipeline: pipeline ?? null });
      }
      if (event.type === 'teammate' && event.event.type === 'error' && FATAL_MODEL_CODES.has(event.event.error.code) && !fatalError) {
        fatalError = event.event.error;
        fatal.abort();
      }
      // A full or read-only disk, or a board folder whose permissions changed, will not heal while the run waits: stop with that one line.
      const failure = event.type === 'teammate' && event.event.type === 'error' ? event.event.error : event.type === 'error' ? event : null;
      if (failure && REFUSED_WRITE_CODES.has(failure.code)) stopWith(`the board's disk refused a write (${failure.code}): ${failure.message}`);
      if (event.type === 'team') stream(event.event);
      else if (event.type === 'teammate' && event.event.type === 'error') stream({ type: 'error', agent: event.event.name, code: event.event.error.code, message: event.event.error.message });
      else if (event.type === 'error') {
        // The session's own (a trace collector out of reach, the board's watcher): a record of the
        // stream, or under --json, whose stdout is the summary alone, a line on stderr.
        stream({ type: 'error', code: event.code, message: event.message });
        if (format === 'json') console.error(`autoteam: ${event.code}: ${event.message}`);
      }
      // Leaving at the end of the run is expected; a thread stopped or dead is news. Each teammate's
      // `shutting down` is counted, and said in one line once the team has stopped.
      const leaving = event.type === 'message' && event.message.type === 'shutdown_response' && event.message.approve === true;
      if (leaving) shutDown++;
      const line = (event.type === 'teammate_exit' && event.exit.kind === 'left') || leaving ? null : describeSessionEvent(session, event, view);
      if (line) log(`  ${indentContinuation(line.text)}`);
      // A person at a terminal is told once how to answer, under the question's line (a script pipes its answers).
      if (line && event.type === 'team' && event.event.type === 'question_asked' && !options.auto && process.stdin.isTTY) {
        // With another waiting, a plain line would answer the older one: how to answer this one.
        const waiting = new Set(session.pendingQuestions().map((question) => question.questionId));
        const older = [...askedInLog.values()].find((asked) => asked.pipeline !== event.event.pipeline && !answers.isOlder(asked.pipeline) && waiting.has(asked.questionId));
        if (older && event.event.pipeline) log(`  a plain line answers pipeline #${older.pipeline}'s question first; '#${event.event.pipeline} <answer>' answers this one`);
        else if (!hinted) log('  type the answer and press Enter (--auto lets a simulated user answer instead)');
        hinted = true;
      }
      // A teammate that died leaves its role without anyone: the run cannot finish, and says why at once.
      if (event.type === 'teammate_exit' && event.exit.kind === 'crashed') {
        stopWith(`${event.exit.name} died (${event.exit.reason})${event.exit.crashLog ? `; details in ${event.exit.crashLog}` : ''}`);
      }
      if (event.type === 'question' && !options.auto && !answers.asked(event.question, event.resumed) && inputEnded) stopUnanswered();
    });
    // Ctrl+C or a kill: stop waiting, hand the work back (session.close), and say so.
    const onSignal = (signal: NodeJS.Signals) => stopWith(`interrupted (${signal}); unfinished tasks were handed back to the board`);
    const offStopSignals = onStopSignals(onSignal);
    // A terminal that is gone (SIGHUP, or a write failing with EIO) stops it as a signal does.
    const offHangup = onHangup(() => onSignal('SIGHUP'));
    // Output piped into something that stopped reading (`| head`): stop as on Ctrl+C, not with a stack
    // trace (after the run, stopping again changes nothing). EIO is the hang-up's, above.
    const onOutputError = (error: NodeJS.ErrnoException) => {
      if (error.code === 'EIO') return;
      if (error.code !== 'EPIPE') throw error;
      stopWith('interrupted (its output was closed); unfinished tasks were handed back to the board');
    };
    // What the run says of the work it stopped then goes to stderr, which may still be read (`2>err | head`).
    let outputClosed = false;
    process.stdout.on('error', (error: NodeJS.ErrnoException) => {
      outputClosed ||= error.code === 'EPIPE';
      onOutputError(error);
    });
    process.stderr.on('error', onOutputError);

    const giveUp = AbortSignal.timeout(timeoutMs);
    const before = session.snapshot();
    answers.atWorkBefore(before.pipelines.filter(({ status }) => status === 'active').map(({ id }) => id));
    log(`autoteam run — ${session.modelLabel}${before.board.location === before.board.rootDir ? '' : ` · board ${session.where}`}`);
    const open = before.tasks.filter(isOpen);
    if (open.length > 0) {
      log(`note: the board already has ${open.length} open task${open.length === 1 ? '' : 's'} (${open.slice(0, 5).map((t) => `#${t.id}`).join(', ')}${open.length > 5 ? ', …' : ''}); the team works those too while this run lasts`);
    }
    let ended: PipelineState[] = [];
    /** When each pipeline ended (its wall time is from the run's start to then; the overall line's to the run's end). */
    const endedAt = new Map<number, number>();
    /** The pipelines the run stopped while they were active, and why, as their summaries say it. */
    const stopped = new Map<number, string>();
    let web: WebBoard | null = null;
    let stuck: (() => void) | undefined;
    try {
      // A port that is taken ends the run before any teammate starts.
      if (options.web) web = await serveWeb(session, { port: options.web.port, flag: '--web' }, (line) => console.error(line));
      await session.start(team);
      for (const line of held ?? []) console.log(line);
      held = null;
      // Merging is of branches: with none (no repository, --no-worktree), autoMerge does nothing, said as the config's warnings are.
      const autoMerge = project.autoMerge === true && session.snapshot().board.repository !== null;
      if (project.autoMerge && !autoMerge) console.error(`autoteam: warning: ${AUTO_MERGE_WITHOUT_BRANCHES}`);
      // autoMerge: what an earlier lead left approved and unmerged is drained now, as at a lead's start (the run's end waits for it).
      const earlier = autoMerge ? session.mergeQueue().catch((error: Error) => log(`the merge queue: ${error.message}`)) : null;
      const firsts = [];
      for (const requirement of options.requirements) {
        const first = await session.post(requirement, options.startStage);
        firsts.push(first);
        pipelines.push(first.pipeline!);
        log(postedLine(first));
      }
      answers.allPosted = true;
      for (const question of options.auto ? [] : session.pendingQuestions()) answers.asked(question);
      // Several analysts ask at once: a script's plain lines cannot say whose question they answer.
      const askers = team.filter((member) => member.role === 'analyst').length;
      if (input && !process.stdin.isTTY && askers > 1 && pipelines.length > 1) {
        log(`note: ${askers} analysts ask at once, so a plain answer line goes to whichever question comes first; start a line with '#N ' to answer pipeline N's`);
      }
      // One requirement: the init record as before; several: the first's, and every pipeline and task.
      const several = pipelines.length > 1 ? { pipelines, tasks: firsts.map((task) => task.id) } : {};
      stream({ type: 'system', subtype: 'init', pipeline: pipelines[0], task: firsts[0]!.id, ...several, model: session.modelIds, board: session.where });
      const signal = AbortSignal.any([giveUp, fatal.signal, stop.signal]);
      // Nobody left to move a pipeline (the last worker of a role went away): left open once it stays so a while, not waited out until the timeout cancels it.
      stuck = watchStuck(session, () => pipelines.filter((id) => session.stateOf(id).status === 'active'), (reason) => stopWith(reason));
      // A drain is not waited for once the run stops: the session's close stops it after the pipeline it is merging.
      const halted = new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
      const unlessStopped = (drain: Promise<unknown>) => {
        drain.catch(() => undefined); // failing after the run stopped waiting, it is not the run's to say
        return Promise.race([drain, halted]);
      };
      // autoMerge: a pipeline is done once the queue has merged it; one the queue sends back (a
      // conflict, a check failing on the rebased tree) is worked again, within the same timeout.
      const settle = async (pipeline: number): Promise<PipelineState> => {
        for (;;) {
          const state = await session.waitForPipeline(pipeline, signal);
          endedAt.set(pipeline, Date.now());
          if (!autoMerge || state.status !== 'approved' || signal.aborted) return state;
          await unlessStopped(session.mergeQueue());
          endedAt.set(pipeline, Date.now());
          if (session.stateOf(pipeline).status !== 'active' || signal.aborted) return state;
        }
      };
      ended = await Promise.all(pipelines.map(settle));
      await unlessStopped(earlier ?? Promise.resolve());
      // Pipelines posted beside the run (autoteam post) went to its team: finished before the team
      // leaves, not dropped part-way. Work that was on the board before the run is not its to finish.
      const waited = new Set(pipelines);
      for (;;) {
        // Those that ended already (before the run's own) are said too, with their end.
        const beside = session.snapshot().pipelines.filter(({ id }) => !waited.has(id) && !before.pipelines.some((old) => old.id === id));
        if (beside.length === 0 || signal.aborted) break;
        const active = beside.filter(({ status }) => status === 'active');
        if (active.length) log(`waiting for pipeline ${active.map(({ id }) => `#${id}`).join(', ')} too: posted beside this run, its team is working on it`);
        for (const { id } of beside) waited.add(id);
        const states = await Promise.all(beside.map(({ id }) => settle(id)));
        // The pipelines' own lines (their `= Pipeline …` end) come before what the run says of them.
        await session.catchUp();
        for (const state of states) log(`pipeline #${state.id} (posted beside this run): ${state.status}${state.reason ? ` — ${state.reason}` : ''}`);
      }
      const timedOut = giveUp.aborted && !fatal.signal.aborted ? timeoutMs : null;
      // Its status is then the board's: cancelled by a timeout, or still active (left open for a lead).
      // Questions already in the lead's inbox count as asked: a pipeline waiting on its own is told so.
      await session.catchUp();
      for (const state of ended) if (state.status === 'active') stopped.set(state.id, await stoppedEarly(session, state.id, unanswered ? noAnswer(state.id) : stopReason, timedOut));
      if (outputClosed) for (const reason of stopped.values()) console.error(`autoteam: ${reason}`);
    } finally {
      stuck?.();
      input?.close();
      // The pages get the pipeline's end before the server goes (the run's summary says the rest).
      await web?.close('the run ended');
      await session.close(3_000);
      if (shutDown > 0) log(`  the team shut down (${shutDown} teammate${shutDown === 1 ? '' : 's'})`);
      offStopSignals();
      offHangup();
    }
    const states = ended.map((state) => (stopped.has(state.id) ? endOfStopped(session.stateOf(state.id), stopped.get(state.id)!) : { ...session.stateOf(state.id), ...(state.reason ? { reason: state.reason } : {}), status: state.status }));

    if (fatalError) {
      const { code, message } = fatalError as { code: string; message: string };
      // Each pipeline's end (left open, for the next lead here), then the error, the last line; JSON gets the summaries below.
      if (format === 'text') for (const state of states) console.log(endLine(state.id, state.status, state.reason));
      console.error(`autoteam: ${message} (${code})`);
      if (format === 'text') return 2;
    }
    const after = session.snapshot();
    const wallMs = Date.now() - started;
    const summaries: RunSummary[] = [];
    for (const [i, state] of states.entries()) {
      const summary = await summarize(session, after, state, checkRequirement(options.requirements[i]!), since, (endedAt.get(state.id) ?? Date.now()) - started, spec, options.settings.prices);
      // A server started for one of this pipeline's tasks, or for none (a message's turn): in its summary.
      const mcp = [...mcpTrouble.values()].filter((trouble) => trouble.pipeline === null || trouble.pipeline === state.id).map(({ pipeline: _, ...trouble }) => trouble);
      summaries.push(mcp.length ? { ...summary, mcp } : summary);
    }
    // A task file that does not parse is left out of everything above (its usage included): say so.
    for (const problem of after.board.problems) console.error(`autoteam: skipped ${problem}`);
    // `run` follows its own pipeline; work it found on the board and did not see end is not lost.
    const unfinished = after.pipelines.filter(({ id, status }) => !pipelines.includes(id) && status === 'active').map(({ id }) => `#${id}`);
    if (unfinished.length) note(`note: pipeline ${unfinished.join(', ')} is still active on the board: a lead (autoteam) or a worker there goes on with it`);
    if (typed.length) note(`note: ${typed.length === 1 ? "a line of standard input was" : `${typed.length} lines of standard input were`} left unused, no question came for ${typed.length === 1 ? 'it' : 'them'} (the first: '${typed[0]!.slice(0, 60)}')`);
    const approved = states.every((state) => state.status === 'approved');
    // JSON: one requirement, its summary (the shape of one-requirement runs); several, an array of them.
    if (format === 'json') console.log(JSON.stringify(summaries.length === 1 ? summaries[0] : summaries, null, 2));
    else if (format === 'stream-json') {
      for (const summary of summaries) stream({ type: 'result', subtype: summary.status === 'approved' ? 'success' : 'error', is_error: summary.status !== 'approved', ...summary });
    } else {
      // The models are said once: on the summary's line, or under several on the overall line.
      const several = summaries.length > 1;
      for (const [i, summary] of summaries.entries()) printSummary(summary, states[i]!.tasks, several ? null : session.modelLabel);
      if (several) printOverall(summaries, wallMs, session.modelLabel);
      for (const { server, agent, state, detail } of mcpTrouble.values()) console.log(`note: MCP server ${server}${agent ? ` of ${agent}` : ''} ${state}: ${detail}`);
    }
    if (fatalError) return 2;
    if ((stopReason as string | null)?.startsWith('interrupted')) return 130;
    return approved ? 0 : 1;
  } finally {
    await board.close();
  }
}

/**
 * A pipeline the run stopped while it was active, as the board holds it once the team has stopped:
 * cancelled by a timeout or left open, with the stop's reason. A teammate finishing its turn while the
 * team stopped may have ended it meanwhile (approved, or failed): then that end is its own.
 */
export function endOfStopped(state: PipelineState, reason: string): PipelineState {
  return state.status === 'approved' || state.status === 'failed' ? state : { ...state, reason };
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
  // Any other stop, a model error no retry fixes among them (its own line and exit 2; the task went back).
  return `${stopReason ?? 'stopped by a model error'}; pipeline #${pipeline} is left open on the board (a lead here goes on with it, autoteam cancel ${pipeline} drops it)`;
}

