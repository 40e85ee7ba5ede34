import type { Task, TaskUsage } from '../core/board/schemas.js';
import { ANY_ROLE } from '../core/board/task-checks.js';
import { isLive, runsNow } from '../core/board/team-registry.js';
import type { ShownMember } from '../core/lead/lead-api.js';
import { pipelineStatuses, pipelineUsage } from '../core/stages/pipeline-status.js';
import { printable } from './printable.js';

const MARKERS: Record<Task['status'], string> = {
  pending: '[ ]',
  in_progress: '[>]',
  completed: '[x]',
  failed: '[!]',
  cancelled: '[-]',
};

export function marker(task: Task): string {
  return MARKERS[task.status];
}

/** One board line as the lesson printed it: marker, id, subject, then stage/revision, owner, blockers. */
export function formatTaskLine(task: Task, width = 100, options: { pipeline?: boolean } = {}): string {
  const stage = task.stage ? ` (${task.stage}${task.revision ? ` r${task.revision}` : ''})` : task.role ? ` (${task.role})` : '';
  const owner = task.owner ? ` @${task.owner}` : '';
  const blocked = task.blockedBy.length ? ` blocked by ${task.blockedBy.map((id) => `#${id}`).join(', ')}` : '';
  // `p2` as the activity lines name a pipeline: with several on the board, two `Implement: Write a…` are told apart.
  const head = `${marker(task)} ${options.pipeline && task.pipeline != null ? `p${task.pipeline} ` : ''}#${task.id}: `;
  const tail = `${stage}${owner}${blocked}`;
  const room = Math.max(20, width - head.length - tail.length);
  const subject = task.subject.length > room ? `${task.subject.slice(0, room - 1)}…` : task.subject;
  return printable(`${head}${subject}${tail}`);
}

/** The line a post is said with, wherever it was posted from: the pipeline, its first task, and its branch in repository mode. */
export function postedLine(task: Task): string {
  return `posted pipeline #${task.pipeline}: task #${task.id} (${task.stage}) — ${task.subject}${task.artifacts.git ? ` · branch ${task.artifacts.git.branch}` : ''}`;
}

/** Who answers a teammate's clarifying question where no lead's screen shows it (a worker's output, `tasks`). */
export const WHO_ANSWERS = 'a lead of this board answers it: autoteam in a folder of the board, its web board, or answer_question of autoteam mcp serve';

/** `15 model calls · 49,463 tokens`: what a pipeline (or a task) has spent. */
export function formatUsage(usage: TaskUsage): string {
  const tokens = usage.inputTokens + usage.outputTokens;
  return `${usage.calls} model call${usage.calls === 1 ? '' : 's'} · ${tokens.toLocaleString('en-US')} tokens`;
}

/**
 * The board's task lines (`width` columns each; each naming its pipeline when there are several), then
 * one line per pipeline with its status and what it spent. In a `terminal`, a pipeline's line longer
 * than `width` (a long branch name, a failure's reason) is broken between words, indented under its
 * text, rather than wrapped by the terminal mid-word; output to a pipe keeps it one line.
 */
export function formatBoard(tasks: readonly Task[], width = 100, terminal = false): string {
  if (tasks.length === 0) return 'No tasks.';
  const statuses = pipelineStatuses(tasks);
  const lines = tasks.map((task) => formatTaskLine(task, width, { pipeline: statuses.size > 1 }));
  for (const [id, status] of statuses) {
    const own = tasks.filter((task) => task.pipeline === id);
    const why = status === 'failed' || status === 'cancelled' ? own.find((task) => (task.status === 'failed' || task.status === 'cancelled') && !task.artifacts.retriedBy)?.result : null;
    const git = own.find((task) => task.artifacts.git?.commit)?.artifacts.git ?? own.find((task) => task.artifacts.git)?.artifacts.git;
    const outcome = outcomeOf(own);
    const branch = git ? ` · ${git.branch}${outcome ? ` ${outcome}` : git.commit ? ` at ${git.commit.slice(0, 12)}` : ''}` : '';
    lines.push(fitted(`pipeline #${id} `, `${status} · ${formatUsage(pipelineUsage(own))}${branch}${why ? ` — ${why}` : ''}`, terminal ? width : undefined));
  }
  return lines.join('\n');
}

export function formatMember(member: ShownMember, lead = false): string {
  // A member that is gone holds no task: the one it had was handed back (the reaper and shutdown do it).
  const gone = member.status === 'dead' || member.status === 'shutdown';
  const task = member.task ? (gone ? `, had #${member.task}` : ` #${member.task}`) : '';
  const reason = member.reason ? ` — ${member.reason}` : '';
  return `${member.name} (${member.role}): ${shownStatus(member)}${task}${reason}${lead ? ' [lead]' : ''}`;
}

/** `resting` for a teammate shut down on its idle timeout that comes back for work (not `shutdown`, which reads as gone for good). */
export function shownStatus(member: ShownMember): string {
  return member.status === 'shutdown' && member.resting ? 'resting' : member.status;
}

/** `250 ms`, `38.9 s`, `2 min 5 s`, `10 min`, `1 h 30 min`: a minute and more in the units a person reads. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min${seconds % 60 ? ` ${seconds % 60} s` : ''}`;
  const minutes = Math.round(seconds / 60);
  return `${Math.floor(minutes / 60)} h${minutes % 60 ? ` ${minutes % 60} min` : ''}`;
}

/** `head` then `text`: in a terminal of `width` columns broken between words (wrapWords); without one (a pipe), one line. */
export function fitted(head: string, text: string, width?: number): string {
  return width ? wrapWords(head, text, width).join('\n') : `${head}${text}`;
}

/**
 * `head` then `text`, as lines of at most `width - 1` columns (a line that fills the terminal exactly
 * wraps in some of them), broken between words; lines after the first are indented as far as
 * `head`. A word longer than a line stays whole.
 */
export function wrapWords(head: string, text: string, width: number): string[] {
  const indent = ' '.repeat(head.length);
  const room = Math.max(head.length + 20, width - 1);
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && head.length + line.length + 1 + word.length > room) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  lines.push(line);
  return lines.map((words, index) => `${index ? indent : head}${words}`);
}

/**
 * What `/shutdown name` says once the teammate has left: that, and when no live member of its role
 * (or of role any, which fills in) is left, that the role's tasks now wait — a teammate the person
 * shut down is not started again by the lead.
 */
export function shutDownLines(name: string, reason: string, members: readonly ShownMember[]): string {
  const line = `${name} shut down: ${reason}`;
  const role = members.find((member) => member.name === name)?.role;
  if (!role || role === ANY_ROLE) return line;
  const covered = members.some((member) => member.name !== name && (member.role === role || member.role === ANY_ROLE) && isLive(member));
  return covered ? line : `${line}\nno ${role} is left running: ${role} tasks wait until one is (/spawn <name> ${role})`;
}

/** What became of a pipeline's branch, from its tasks: `merged into main`, `discarded`, or null. */
export function outcomeOf(tasks: readonly Task[]): string | null {
  const outcome = tasks.find((task) => task.artifacts.outcome)?.artifacts.outcome;
  return outcome ? printable(`${outcome.action}${outcome.into ? ` into ${outcome.into}` : ''}`) : null;
}

/**
 * Where a teammate this session does not run reads a message sent it: a live member of another
 * process (an `autoteam worker`) between its turns, as one of this session's does; any other when it starts.
 */
export function readsItWhere(member: ShownMember | undefined): string {
  if (member && runsNow(member)) return ` (running in process ${member.pid ?? '?'} on ${member.host ?? 'this host'})`;
  return ' (not running: it reads it when it starts)';
}
