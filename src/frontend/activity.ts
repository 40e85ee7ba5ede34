import fs from 'node:fs';
import type { LeadApi } from '../core/lead/lead-api.js';
import type { LeadEvent } from '../core/lead/session.js';
import type { TeammateExit } from '../core/agent/manager.js';
import type { TeamEvent } from '../core/events/schema.js';
import { cutText, formatWait } from '../core/sizes.js';

/** How a line of output should look; the ink app colours by it, line mode ignores it. */
export type Tone = 'info' | 'reply' | 'error' | 'question' | 'answer' | 'pipeline' | 'activity' | 'says' | 'command';

export interface ActivityLine {
  text: string;
  tone: Tone;
}

/** How a front end shows what the models say: one line per turn, cut to `width`, or (verbose) whole turns. */
export interface ActivityView {
  verbose: boolean;
  /** Columns a line may take: the terminal's, or 160 where there is none. */
  readonly width: number;
  /** Whether `width` is a terminal's (not the fallback of output to a pipe). */
  readonly terminal: boolean;
  /**
   * Told every event of the log, in order: the pipeline its line names (`[p2 engineer]`) once the
   * view has seen more than one, else null. Absent: no line names its pipeline.
   */
  pipelineTag?(event: TeamEvent): number | null;
  /** An error's line, or null for one said again too soon (`errorRepeats`). Absent: every one is shown. */
  errorLine?(line: ActivityLine): ActivityLine | null;
}

/** How long a front end holds back an error line it has just shown, when the same one comes again. */
export const ERROR_REPEAT_MS = 60_000;

/**
 * Error lines with repeats held back: a line shown in the last `quietMs` is counted, not shown again,
 * and when it is shown again it says how often it came meanwhile. Something retried on every poll (a
 * folder where the lead's inbox should be, a team config broken by hand) is otherwise one line twice a
 * second, burying everything else, until it is mended.
 */
export function errorRepeats(quietMs = ERROR_REPEAT_MS, now: () => number = Date.now): (line: ActivityLine) => ActivityLine | null {
  const shown = new Map<string, { at: number; held: number }>();
  return (line) => {
    const at = now();
    const last = shown.get(line.text);
    if (last && at - last.at < quietMs) {
      last.held++;
      return null;
    }
    shown.delete(line.text);
    shown.set(line.text, { at, held: 0 });
    if (shown.size > 200) shown.delete(shown.keys().next().value!);
    return last?.held ? { ...line, text: `${line.text} (and ${last.held} more time${last.held === 1 ? '' : 's'} since it was last shown)` } : line;
  };
}

/**
 * A view for a front end: `columns` is asked each time, so a resized terminal is followed.
 * `tagPipelines` (on unless said): lines name their pipeline once there are several, or from the
 * first with `'always'` (a run of several requirements); a front end whose lines name it anyway turns it off.
 */
export function activityView(columns: () => number | undefined = () => undefined, options: { verbose?: boolean; tagPipelines?: boolean | 'always' } = {}): ActivityView {
  return {
    verbose: options.verbose ?? false,
    get width() {
      return columns() || 160;
    },
    get terminal() {
      return Boolean(columns());
    },
    ...(options.tagPipelines === false ? {} : { pipelineTag: pipelineTags(options.tagPipelines === 'always') }),
    errorLine: errorRepeats(),
  };
}

/**
 * Which pipeline a line names: none while the view has seen one pipeline, its own once it has seen a
 * second. Lines of several pipelines interleave, and a teammate's name no longer says whose work it
 * is; from then on every line says it, so one pipeline's lines read the same to its end (and `grep
 * p2` finds them all), merge steps and all. `always`: from the first line, where several are known to come.
 */
export function pipelineTags(always = false): (event: TeamEvent) => number | null {
  const seen = new Set<number>();
  return (event) => {
    const id = event.pipeline;
    if (id == null) return null;
    seen.add(id);
    return always || seen.size > 1 ? id : null;
  };
}

/** `[engineer] says: …`: the whole turn when verbose, else its text on one line, cut to the width. */
export function saysLine(name: string, text: string, view: Pick<ActivityView, 'verbose' | 'width'>): string {
  const head = `[${name}] says: `;
  if (view.verbose) return `${head}${text.trim()}`;
  const line = `${head}${text.replace(/\s+/g, ' ').trim()}`;
  // One column short of the width: a line that fills the terminal exactly wraps in some of them.
  const room = Math.max(head.length + 10, view.width - 1);
  return line.length > room ? `${line.slice(0, room - 1).trimEnd()}…` : line;
}

/** The subject of task `id`, when a front end knows it (the session's board). */
export type SubjectOf = (id: number) => string | undefined;
/** Where a pipeline's files are (its workspace or worktree), for the line that says it was approved. */
export type WorkspaceOf = (pipeline: number) => string | undefined;

/** The characters of a hook's reason a line shows: a hook may say 64 KiB on every call. */
const SHOWN_REASON_CHARS = 600;

/** What a session event looks like in the activity stream; null for events shown elsewhere (status, board). */
export function describeEvent(
  event: LeadEvent,
  view: Pick<ActivityView, 'verbose' | 'width' | 'pipelineTag'> = { verbose: false, width: 160 },
  subjectOf: SubjectOf = () => undefined,
  workspaceOf: WorkspaceOf = () => undefined,
): ActivityLine | null {
  const line = event.type === 'team' ? describeTeamEvent(event.event, view, subjectOf, workspaceOf) : describeOne(event, view);
  // A line of several (a pasted answer, a whole model turn) keeps its continuation under its text.
  return line?.text.includes('\n') ? { ...line, text: indentContinuation(line.text) } : line;
}

export function indentContinuation(text: string): string {
  return text.replace(/\n/g, '\n  ');
}

function describeOne(event: LeadEvent, view: Pick<ActivityView, 'verbose' | 'width'>): ActivityLine | null {
  switch (event.type) {
    case 'teammate': {
      // What teammates did and said comes from the board's log (`team` events), in its order; the
      // thread's own channel still carries what never reaches the log: its errors and its output.
      const teammate = event.event;
      if (teammate.type === 'error') return { text: `[${teammate.name}] error ${teammate.error.code}: ${teammate.error.message}`, tone: 'error' };
      if (teammate.type === 'log') {
        const text = teammate.text.trimEnd();
        return text ? { text: `[${teammate.name} ${teammate.stream}] ${text}`, tone: teammate.stream === 'stderr' ? 'error' : 'activity' } : null;
      }
      return null;
    }
    case 'teammate_exit':
      return describeExit(event.exit);
    // Questions, answers and pipeline ends are shown from the log (question_asked, …); a question an
    // earlier lead left pending has no event since this session began, so it is shown here.
    case 'question':
      // Said as a question asked now is (pipeline and all), and that it was left by the last session.
      return event.resumed ? { text: `? ${event.question.from} asks${event.question.pipeline != null ? ` (pipeline #${event.question.pipeline})` : ''}, still waiting from the last session: ${event.question.question}`, tone: 'question' } : null;
    case 'question_withdrawn':
    case 'answered':
    case 'pipeline':
    case 'team':
      return null;
    case 'plan':
      return { text: `plan ${event.requestId} from ${event.from}: ${event.plan}  → /approve ${event.requestId} or /reject ${event.requestId} <why>`, tone: 'question' };
    case 'message':
      // A general task's failure told to the lead is its `failed #N: …` line from the log already
      // (which comes after the claim; this message could come before it). The lead's inbox keeps it.
      if (event.message.failed === true) return null;
      return { text: `✉ ${event.message.from}: ${event.message.content}`, tone: 'info' };
    case 'error':
      return { text: `error ${event.code}: ${event.message}`, tone: 'error' };
    case 'notice':
      return { text: event.text, tone: 'info' };
    case 'board':
      return null;
  }
}

/** How a teammate left, in one line: a crash names its log, where the error and stack are. */
export function describeExit(exit: TeammateExit): ActivityLine {
  const handed = exit.released.length ? `; handed back ${exit.released.map((id) => `#${id}`).join(', ')}` : '';
  switch (exit.kind) {
    case 'left':
      return { text: `[${exit.name}] left: ${exit.reason}`, tone: 'info' };
    case 'terminated':
      return { text: `[${exit.name}] stopped: ${exit.reason}${handed}`, tone: 'info' };
    case 'crashed':
      return { text: `[${exit.name}] died: ${exit.reason}${handed}${exit.crashLog ? ` — details in ${exit.crashLog}` : ''}`, tone: 'error' };
  }
}

/** describeEvent with what a session knows: a task's subject, and where an approved pipeline's files are. */
export function describeSessionEvent(session: Pick<LeadApi, 'task' | 'snapshot'>, event: LeadEvent, view: Pick<ActivityView, 'verbose' | 'width' | 'pipelineTag' | 'errorLine'>): ActivityLine | null {
  const line = sessionLine(session, event, view);
  const error = event.type === 'error' || (event.type === 'teammate' && event.event.type === 'error');
  return line && error && view.errorLine ? view.errorLine(line) : line;
}

function sessionLine(session: Pick<LeadApi, 'task' | 'snapshot'>, event: LeadEvent, view: Pick<ActivityView, 'verbose' | 'width' | 'pipelineTag'>): ActivityLine | null {
  // A model error no retry fixes stopped it: its tasks wait, and the line says how to bring it back.
  if (event.type === 'teammate_exit' && event.exit.why === 'model_error') {
    const role = session.snapshot().team.members.find((member) => member.name === event.exit.name)?.role;
    const line = describeExit(event.exit);
    const spawn = `/spawn ${event.exit.name} ${role ?? '<role>'}`;
    return { ...line, text: `${line.text} — its tasks wait: ${spawn} starts it again once the model answers (/model ${role ?? '<role>'} <model> first for another model; a new key needs autoteam started again)` };
  }
  return describeEvent(
    event,
    view,
    (id) => session.task(id)?.subject,
    (pipeline) => {
      // Named only where it is: on a shared board another machine's folder may have worked it.
      const folder = session.snapshot().pipelines.find((shown) => shown.id === pipeline)?.workspace;
      return folder && fs.existsSync(folder) ? folder : undefined;
    },
  );
}

/**
 * One event of the board's log as a line of the activity stream: what every thread and process of
 * the team did, in the order it was written. Null for events shown elsewhere (the team panel) or not
 * worth a line.
 */
export function describeTeamEvent(
  event: TeamEvent,
  view: Pick<ActivityView, 'verbose' | 'width' | 'pipelineTag'>,
  subjectOf: SubjectOf = () => undefined,
  workspaceOf: WorkspaceOf = () => undefined,
): ActivityLine | null {
  const tag = view.pipelineTag?.(event) ?? null;
  const name = (agent: string) => (tag === null ? agent : `p${tag} ${agent}`);
  const who = `[${name(event.agent ?? 'runtime')}]`;
  const task = event.task ? `#${event.task}` : '';
  switch (event.type) {
    case 'task_posted':
      // The lead's own posts are said by the front end that made them; a handoff is news.
      return event.by === 'lead' || event.stage === null ? null : { text: `${who} → ${task} ${event.stage}${event.revision ? ` r${event.revision}` : ''}: ${event.subject}`, tone: 'activity' };
    case 'task_claimed':
      return { text: `${who} ${event.takeover ? 'took over' : 'claimed'} ${task} ${subjectOf(event.task!) ?? ''}`.trimEnd(), tone: 'activity' };
    case 'task_released': {
      if (event.kind === 'unfinished' || event.kind === 'error') {
        const wait = event.notBefore ? Math.max(0, Date.parse(event.notBefore) - Date.parse(event.ts)) : null;
        // A release that counts no attempt (a model error no retry can fix: the teammate stops) says no attempt.
        // Told after its back-off had run out (written once an outage ended): claimable now, not "in 0 ms".
        const retry = event.attempt === undefined ? '' : `; attempt ${event.attempt}${wait === null ? '' : wait === 0 ? ', claimable again now' : `, claimable again in ${formatWait(wait)}`}`;
        return { text: `${who} released ${task} ${event.kind === 'error' ? 'after an error' : 'unfinished'} (${event.detail})${retry}`, tone: 'activity' };
      }
      return { text: `${who} released ${task} (${event.detail})`, tone: 'activity' };
    }
    case 'task_completed':
      // A general task's result is what the person asked for: shown (a stage's is in its own lines).
      if (!event.pipeline && event.result) return { text: `${who} completed ${task}: ${event.result}`, tone: 'activity' };
      return { text: `${who} completed ${task}${event.signal ? ` (${event.signal})` : ''}`, tone: 'activity' };
    case 'task_failed':
      return { text: `${who} failed ${task}: ${event.reason}`, tone: 'error' };
    case 'task_cancelled':
      return { text: `${task} cancelled by ${event.by}`, tone: 'info' };
    case 'task_retried':
      return { text: `${task} retried as #${event.newTask} by ${event.by}`, tone: 'info' };
    case 'model_call':
      // The lead's words are its reply (`lead: …`), shown by the front end that asked.
      return event.text && event.purpose === 'turn' && event.role !== 'lead' ? { text: saysLine(name(event.agent ?? 'agent'), event.text, view), tone: 'says' } : null;
    case 'tool_call':
      // A question and a saved requirement are shown as such (question_asked), not as tool lines; a
      // call of theirs the runtime refused never becomes one, so it is shown here.
      if ((event.tool === 'ask_clarifying_question' || event.tool === 'save_requirement') && event.outcome === 'ok') return null;
      // A general task's completion is its `completed #N: <result>` line, which the tool's own write
      // logs before the call's event: the tool line after it would say it again, out of order.
      if (event.tool === 'complete_task' && event.outcome === 'ok') return null;
      // Not run because the task was cancelled or taken over: its task_cancelled or takeover line says so once.
      if (event.outcome === 'claim_lost') return null;
      return { text: `${who} ${event.tool}${event.outcome === 'ok' ? '' : ' ✗'}: ${event.summary}`, tone: 'activity' };
    case 'question_asked':
      // Which pipeline asks: with several at once (`run` with several requirements), answers go in order.
      return { text: `? ${event.agent ?? 'a teammate'} asks${event.pipeline != null ? ` (pipeline #${event.pipeline})` : ''}: ${event.question}`, tone: 'question' };
    case 'question_answered':
      return { text: `! ${event.by} answers${event.asker ? ` ${event.asker}` : ''}${tag === null ? '' : ` (pipeline #${tag})`}: ${event.answer}`, tone: 'answer' };
    case 'question_withdrawn':
      return { text: `? ${event.agent ?? 'a teammate'}'s question withdrawn (${event.reason})`, tone: 'info' };
    case 'pipeline_status': {
      if (event.status === 'active') return null;
      // Approved work is somewhere on this machine: the line says where, so the person can open it.
      const files = event.status === 'approved' && event.pipeline != null ? workspaceOf(event.pipeline) : undefined;
      return { text: `= ${pipelineEnd(event.pipeline, event.status, event.reason)}${files ? ` — files in ${files}` : ''}`, tone: 'pipeline' };
    }
    case 'hook_decision':
      // A screenful at most: the log has more (autoteam events --json), and a block's agent reads it all.
      return event.decision === 'allow' ? null : { text: `hook ${event.hook} (${event.command}): ${event.decision}${event.reason ? ` — ${cutText(event.reason, SHOWN_REASON_CHARS, 'autoteam events --json has more')}` : ''}`, tone: event.decision === 'block' ? 'error' : 'info' };
    case 'merge_step':
      return { text: `merge #${event.pipeline}: ${event.step.replace('_', ' ')} — ${event.detail}`, tone: event.step === 'sent_back' || event.step === 'error' ? 'error' : event.step === 'merged' ? 'pipeline' : 'info' };
    case 'board_outage':
      return { text: event.state === 'down' ? `the board cannot be reached (${event.source}): ${event.message}` : event.message, tone: event.state === 'down' ? 'error' : 'info' };
    case 'note':
      return { text: `${who} ${event.text}`, tone: 'activity' };
    case 'repository_instructions':
      return { text: `${who} read the repository's instructions: ${event.files.map((file) => `${file.path}${file.kept === 0 ? ' (left out: cap reached)' : file.kept < file.bytes ? ' (cut)' : ''}`).join(', ')}`, tone: 'activity' };
    case 'mcp_server':
      if (event.state === 'stopped') return null;
      if (event.state === 'started') return { text: `${who} MCP server ${event.server} ${event.detail}${event.tools === undefined ? '' : ` (${event.tools} tools)`}`, tone: 'activity' };
      return { text: `${who} MCP server ${event.server} ${event.state}: ${event.detail}`, tone: event.state === 'exited' ? 'info' : 'error' };
    default:
      // Shown elsewhere (the team panel) or carried by other lines: lifecycle, criteria, checks, verdicts.
      return null;
  }
}

/**
 * What ended a pipeline, naming it: many run at once, so a line that does not say which would leave
 * the person guessing. An approval's or a failure's reason already starts `Pipeline #N`; a cancel's
 * says who cancelled it and why.
 */
function pipelineEnd(pipeline: number | null | undefined, status: string, reason: string | undefined): string {
  if (reason && /^Pipeline #\d+/.test(reason)) return reason;
  const which = pipeline != null ? `Pipeline #${pipeline}` : 'A pipeline';
  if (!reason) return `${which} ${status}`;
  return reason.startsWith(status) ? `${which} ${reason}` : `${which} ${status}: ${reason}`;
}
