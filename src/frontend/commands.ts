import type { Task } from '../core/board/schemas.js';
import type { Pipeline } from '../core/stages/pipeline.js';
import { AutoteamError, FATAL_MODEL_CODES, ModelError, serializeError } from '../core/errors.js';
import type { LeadApi, PendingQuestion } from '../core/lead/lead-api.js';
import { formatSpend, type MemberSpend } from '../core/lead/spend.js';
import type { ActivityView, Tone } from './activity.js';
import { formatBoard, formatMember, postedLine, readsItWhere, shutDownLines, wrapWords } from './format.js';
import { inboxText } from './inbox-text.js';
import { byHand, drainQueue } from './merge-lines.js';
import { ADDRESSED, answerTyped } from './answer.js';
import { closestWord } from '../core/words.js';

export type { Tone } from './activity.js';

/** What the dispatcher needs from a front end. */
export interface CommandIO {
  session: LeadApi;
  print(text: string, tone?: Tone): void;
  /** Free text for the lead agent (LeadApi.ask, with whatever the front end shows meanwhile); resolves with its reply. */
  askLead(text: string): Promise<string>;
  /** How the activity stream shows what the models say (/verbose); absent where there is no stream. */
  view?: ActivityView;
}

export type Outcome = 'continue' | 'quit';

interface Command {
  name: string;
  args: string;
  help: string;
  run(args: string, io: CommandIO): Promise<Outcome | void> | Outcome | void;
}

/** Cancels a pipeline's open tasks; the line that says which. Shared by /cancel and `autoteam cancel`. */
export async function cancelPipeline(pipeline: Pick<Pipeline, 'cancel'>, id: number, by: string): Promise<string> {
  return cancelledLine(id, await pipeline.cancel(id, by));
}

const cancelledLine = (id: number, cancelled: readonly number[]) => (cancelled.length ? `pipeline #${id} cancelled: ${cancelled.map((t) => `#${t}`).join(', ')}` : `pipeline #${id} was already cancelled: nothing to do`);
/** The line that says a pipeline was retried, and with which task. */
export const retriedLine = (id: number, task: Task) => `pipeline #${id} retried: task #${task.id} (${task.stage}${task.revision ? ` r${task.revision}` : ''}) — ${task.subject}`;

export const pipelineId = (text: string): number => positiveId(text, 'pipeline');
export const taskId = (text: string): number => positiveId(text, 'task');

function positiveId(text: string, what: 'pipeline' | 'task'): number {
  const id = /^#?\d+$/.test(text.trim()) ? Number(text.trim().replace(/^#/, '')) : Number.NaN;
  if (!Number.isSafeInteger(id) || id <= 0) throw new AutoteamError(`a ${what} id is a positive whole number${id > Number.MAX_SAFE_INTEGER ? ` of at most ${Number.MAX_SAFE_INTEGER}` : ''}, got '${text.trim()}'`, 'USAGE');
  return id;
}

function need(args: string, usage: string): string {
  const value = args.trim();
  if (!value) throw new AutoteamError(`usage: ${usage}`, 'USAGE');
  return value;
}

export const COMMANDS: readonly Command[] = [
  {
    name: 'help',
    args: '',
    help: 'this list',
    run: (_args, io) => io.print(helpText(io.session.leadToolNames(), io.view?.width)),
  },
  {
    name: 'tasks',
    args: '',
    help: 'the board: [ ] pending, [>] in progress, [x] completed, [!] failed, [-] cancelled',
    run: (_args, io) => {
      const { tasks, board } = io.session.snapshot();
      io.print([formatBoard(tasks, io.view?.width, io.view?.terminal), ...board.problems.map((problem) => `skipped ${problem}`)].join('\n'));
    },
  },
  {
    name: 'team',
    args: '',
    help: 'who is on the team and what each one is doing',
    run: (_args, io) => {
      const { team, spend, models } = io.session.snapshot();
      const spent = (of?: MemberSpend) => (of?.calls ? ` [${formatSpend(of, models.offline)}]` : '');
      const lines = [`team ${team.name} — lead: ${team.lead}${spent(spend.members[team.lead])}${spend.total.calls ? ` · spent ${formatSpend(spend.total, models.offline)}` : ''}`];
      // The model only for teammates this session runs: another process's may run on another.
      for (const member of team.members) lines.push(`  ${formatMember(member)}${spent(member.spend)}${member.running && !models.offline ? ` · ${member.model}` : ''}`);
      if (team.members.length === 0) lines.push('  no teammates (/spawn <name> <role>)');
      io.print(lines.join('\n'));
    },
  },
  {
    name: 'inbox',
    args: '',
    help: "the lead's unread messages (drained), pending plan requests and questions",
    run: (_args, io) => io.print(inboxText(io.session)),
  },
  {
    name: 'show',
    args: '<id>',
    help: "a task's JSON",
    run: (args, io) => {
      const id = taskId(need(args, '/show <id>'));
      const task = io.session.task(id);
      if (!task) {
        // Its file unreadable (what /tasks skips), or past the board's last task: said as such.
        const { board, tasks } = io.session.snapshot();
        const unreadable = board.problems.find((problem) => problem.includes(`task_${id}.json`));
        if (unreadable) throw new AutoteamError(`task #${id} cannot be read: ${unreadable}`, 'NOT_FOUND');
        const last = tasks.reduce((most, known) => Math.max(most, known.id), 0);
        throw new AutoteamError(`task #${id} does not exist${id > last ? ` (${last ? `the last task is #${last}` : 'the board has no tasks'})` : ''}`, 'NOT_FOUND');
      }
      io.print(JSON.stringify(task, null, 2));
    },
  },
  {
    name: 'post',
    args: '<text>',
    help: 'post a requirement as a new pipeline (no model involved)',
    run: async (args, io) => {
      const task = await io.session.post(need(args, '/post <requirement>'));
      io.print(postedLine(task));
    },
  },
  {
    name: 'cancel',
    args: '<pipeline>',
    help: "cancel a pipeline's open tasks (their owners stop)",
    run: async (args, io) => {
      const id = pipelineId(need(args, '/cancel <pipeline>'));
      io.print(cancelledLine(id, await io.session.cancel(id)));
    },
  },
  {
    name: 'retry',
    args: '<pipeline>',
    help: 'restart a failed or cancelled pipeline from the stage that failed',
    run: async (args, io) => {
      const id = pipelineId(need(args, '/retry <pipeline>'));
      io.print(retriedLine(id, await io.session.retry(id)));
    },
  },
  {
    name: 'diff',
    args: '<pipeline>',
    help: "a pipeline's branch: its files and diff against where it started",
    run: async (args, io) => io.print(await io.session.diff(pipelineId(need(args, '/diff <pipeline>')))),
  },
  {
    name: 'merge',
    args: '<pipeline>|all',
    help: 'merge an approved branch into your current branch (a conflict changes nothing); all: drain the merge queue',
    run: (args, io) => {
      if (['all', '--queue'].includes(args.trim().toLowerCase())) return drainQueue(io);
      // `/merge all now`: the word it takes instead of an id, said with the id.
      if (/^(all|--queue)\s/i.test(args.trim())) throw new AutoteamError(`/merge takes a pipeline id or all, and nothing after it: got '${args.trim()}'`, 'USAGE');
      return byHand(io, (options) => io.session.merge(pipelineId(need(args, '/merge <pipeline>|all')), options));
    },
  },
  {
    name: 'discard',
    args: '<pipeline>',
    help: "remove a pipeline's worktree and branch",
    run: (args, io) => byHand(io, (options) => io.session.discard(pipelineId(need(args, '/discard <pipeline>')), options)),
  },
  {
    name: 'answer',
    args: '<text>',
    help: "answer the pending question (a plain line does too; '#N answer' answers pipeline N's)",
    run: async (args, io) => {
      await answerTyped(io, need(args, '/answer <text>'));
    },
  },
  {
    name: 'spawn',
    args: '<name> <role> […]',
    help: 'start a teammate (roles: analyst, engineer, reviewer, or any for general tasks); words after the role are its own instructions',
    run: async (args, io) => {
      const [name, role, ...rest] = args.trim().split(/\s+/);
      if (!name || !role) throw new AutoteamError('usage: /spawn <name> <role> [instructions]', 'USAGE');
      const member = io.session.snapshot().team.members.find((candidate) => candidate.name === name);
      if (member && member.status !== 'shutdown' && member.status !== 'dead' && io.session.isRunning(name)) {
        throw new AutoteamError(`'${name}' is already running`, 'USAGE');
      }
      io.session.spawn(name, role, rest.join(' ') || undefined);
      io.print(`spawned ${name} (${role})`);
    },
  },
  {
    name: 'shutdown',
    args: '<name>',
    help: 'ask a teammate to finish up and shut down (the protocol, bounded wait)',
    run: async (args, io) => {
      const name = need(args, '/shutdown <name>');
      if (name === io.session.lead) return io.print(`${name} is this session, the team's lead: /quit shuts the whole team down`);
      if (!io.session.isRunning(name)) {
        // A worker of another terminal or machine is asked through its inbox.
        io.print((await io.session.requestShutdownElsewhere(name)) ?? `${name} is not running (/team lists the team)`);
        return;
      }
      io.print(`asking ${name} to shut down…`);
      const exit = await io.session.requestShutdown(name);
      io.print(exit ? shutDownLines(name, exit.reason, io.session.snapshot().team.members) : `${name} is not running`);
    },
  },
  {
    name: 'approve',
    args: '[<request-id>]',
    help: "approve a teammate's plan (the one waiting, when only one is)",
    run: async (args, io) => {
      const waiting = args.trim() ? null : io.session.snapshot().plans.map((plan) => plan.id);
      if (waiting?.length === 0) throw new AutoteamError('no plan is waiting for a decision', 'USAGE');
      const id = waiting?.length === 1 ? waiting[0]! : need(args, `/approve <request-id>${waiting ? ` (waiting: ${waiting.join(', ')})` : ''}`);
      await io.session.decidePlan(id, true);
      io.print(`approved ${id}`);
    },
  },
  {
    name: 'reject',
    args: '<request-id> <why>',
    help: "reject a teammate's plan, saying why",
    run: async (args, io) => {
      const [id, ...why] = args.trim().split(/\s+/);
      if (!id || why.length === 0) throw new AutoteamError('usage: /reject <request-id> <why>', 'USAGE');
      await io.session.decidePlan(id, false, why.join(' '));
      io.print(`rejected ${id}`);
    },
  },
  {
    name: 'auto',
    args: 'on|off',
    help: "let a simulated user answer the analyst's questions",
    run: (args, io) => {
      const value = args.trim().toLowerCase();
      if (value === 'on' || value === 'off') io.session.setAutoAnswer(value === 'on');
      else if (value) throw new AutoteamError('usage: /auto on|off', 'USAGE');
      io.print(`auto answers: ${io.session.autoAnswer ? 'on' : 'off'}`);
    },
  },
  {
    name: 'msg',
    args: '<teammate> <text>',
    help: 'send one teammate a message (read between its turns)',
    run: async (args, io) => {
      const [, name = '', text = ''] = /^(\S+)\s+(\S[\s\S]*)$/.exec(args.trim()) ?? [];
      if (!name || !text) throw new AutoteamError('usage: /msg <teammate> <text>', 'USAGE');
      await io.session.message(name, text.trim());
      io.print(`sent to ${name}${io.session.isRunning(name) ? '' : readsItWhere(io.session.snapshot().team.members.find((entry) => entry.name === name))}`);
    },
  },
  {
    name: 'model',
    args: '[<role> <model>]',
    help: "each role's model, or a role's model for its next tasks",
    run: (args, io) => {
      const [role, choice, ...rest] = args.trim().split(/\s+/).filter(Boolean);
      if (!role) {
        const { roles, others } = io.session.snapshot().models;
        const width = Math.max(12, ...roles.map((entry) => entry.role.length + 2));
        io.print(['Models (next tasks):', ...roles.map((entry) => `  ${entry.role.padEnd(width)}${entry.model}`), `  ${'other roles'.padEnd(width)}${others}`].join('\n'));
        return;
      }
      if (!choice || rest.length) throw new AutoteamError('usage: /model <role> <model>  (offline, anthropic, openai, <provider>:<model id>, or a model id)', 'USAGE');
      io.session.setModel(role, choice);
      io.print(`${role}: next tasks on ${io.session.modelOf(role)}`);
    },
  },
  {
    name: 'verbose',
    args: 'on|off',
    help: 'what the models say: whole turns, or one line each',
    run: (args, io) => {
      if (!io.view) throw new AutoteamError('this front end shows no activity stream', 'USAGE');
      const value = args.trim().toLowerCase();
      if (value === 'on' || value === 'off') io.view.verbose = value === 'on';
      else if (value) throw new AutoteamError('usage: /verbose on|off', 'USAGE');
      io.print(`verbose: ${io.view.verbose ? 'on (whole model turns)' : 'off (one line per model turn)'}`);
    },
  },
  {
    name: 'quit',
    args: '',
    help: 'shut the team down and leave (also q, exit, quit, Ctrl+C, Ctrl+D)',
    run: () => 'quit',
  },
];

export const COMMAND_NAMES = COMMANDS.map((command) => command.name);

/**
 * The command list; with the lead's tools, what the lead agent can do with free text. Each text is
 * wrapped to `width` columns under the column the texts start at (a terminal would wrap it at
 * column 0, into the column of the commands).
 */
export function helpText(leadTools: readonly string[] = [], width = 80): string {
  const row = (left: string, text: string) => wrapWords(`  ${left.padEnd(28)}`, text, width);
  const rows = COMMANDS.flatMap((command) => row(`/${command.name}${command.args ? ` ${command.args}` : ''}`, command.help));
  const lead = [...row('anything else', 'talk to the lead (a requirement becomes a pipeline)'), ...(leadTools.length ? row('', `the lead's tools: ${leadTools.join(', ')}`) : [])];
  return ['Commands:', ...rows, ...lead].join('\n');
}

/** The command `name` is most likely a slip for (a prefix, or two edits at most), or null. */
export function closestCommand(name: string): string | null {
  const lower = name.toLowerCase();
  const prefixed = COMMAND_NAMES.find((candidate) => candidate.startsWith(lower));
  if (prefixed && lower) return prefixed;
  return closestWord(lower, COMMAND_NAMES);
}

/**
 * Tab completion of command names. A unique prefix completes (with a trailing space); several
 * candidates complete to their common prefix. Returns the line unchanged when nothing fits.
 */
export function complete(line: string): { line: string; candidates: string[] } {
  const match = /^\/(\S*)$/.exec(line);
  if (!match) return { line, candidates: [] };
  const prefix = match[1]!.toLowerCase();
  const candidates = COMMAND_NAMES.filter((name) => name.startsWith(prefix));
  if (candidates.length === 0) return { line, candidates };
  if (candidates.length === 1) return { line: `/${candidates[0]} `, candidates };
  let common = candidates[0]!;
  for (const name of candidates) while (!name.startsWith(common)) common = common.slice(0, -1);
  return { line: `/${common.length > prefix.length ? common : prefix}`, candidates };
}

export type ParsedLine =
  | { kind: 'empty' }
  | { kind: 'command'; command: Command; args: string }
  | { kind: 'unknown'; name: string; hint: string }
  | { kind: 'answer'; text: string }
  | { kind: 'lead'; text: string };

export function parseLine(raw: string, questionPending: boolean): ParsedLine {
  const line = raw.trim();
  if (!line) return { kind: 'empty' };
  // The words the lesson's REPL quits on.
  if (/^(q|exit|quit)$/i.test(line)) return { kind: 'command', command: COMMANDS.find((c) => c.name === 'quit')!, args: '' };
  if (line.startsWith('/')) {
    const [, name = '', args = ''] = /^\/(\S*)\s*([\s\S]*)$/.exec(line) ?? [];
    const command = COMMANDS.find((candidate) => candidate.name === name.toLowerCase());
    // A command that takes nothing is not run with words it would drop (`/tasks mine`).
    if (command) return command.args === '' && args.trim() ? { kind: 'unknown', name, hint: `/${command.name} takes nothing after it (got '${args.trim()}'; /help lists the commands)` } : { kind: 'command', command, args };
    const closest = closestCommand(name);
    return { kind: 'unknown', name, hint: `unknown command /${name}${closest ? ` — did you mean /${closest}?` : ''} (/help lists them)` };
  }
  // `#N …` is an answer to pipeline N's question, whether one waits or not: never a requirement for the lead.
  return questionPending || ADDRESSED.test(line) ? { kind: 'answer', text: line } : { kind: 'lead', text: line };
}

/**
 * A block of lines that arrived as one input (typed ahead, or pasted where the terminal marks no
 * paste) split where a line starts with a command (`/post …`, `/tasks`): each command runs on its
 * own, in order, instead of the first taking the rest as its text. Lines that start no command stay
 * with the line before them, so a requirement or an answer of several lines is still one — save
 * after a command that takes nothing (`/tasks`), where they start the next part.
 */
export function splitCommands(raw: string): string[] {
  const parts: string[] = [];
  // After a command that takes nothing (`/tasks`), the next line is a part of its own, not its text.
  let closed = false;
  for (const line of raw.split('\n')) {
    const name = /^\s*\/(\S+)(\s|$)/.exec(line)?.[1]?.toLowerCase();
    const command = name === undefined ? undefined : COMMANDS.find((candidate) => candidate.name === name);
    const starts = parts.length === 0 || command !== undefined || (closed && line.trim() !== '');
    if (starts) parts.push(line);
    else parts[parts.length - 1] += `\n${line}`;
    if (starts) closed = command?.args === '';
  }
  return parts.map((part) => part.trim()).filter(Boolean);
}

/** Runs one typed line: a command, an answer, or a message to the lead; `begunFor`: the question in front when its typing began (null: none), where the REPL knows. */
export async function runLine(raw: string, io: CommandIO, begunFor?: PendingQuestion | null): Promise<Outcome> {
  const parsed = parseLine(raw, begunFor === undefined ? io.session.pendingQuestions().length > 0 : begunFor !== null);
  try {
    switch (parsed.kind) {
      case 'empty':
        return 'continue';
      case 'unknown':
        io.print(parsed.hint, 'error');
        return 'continue';
      case 'command':
        return (await parsed.command.run(parsed.args, io)) ?? 'continue';
      case 'answer':
        await answerTyped(io, parsed.text, begunFor ?? undefined);
        return 'continue';
      case 'lead': {
        // The lead's model failed after its retries: a requirement can still go on the board without it (not so on a bad key or
        // endpoint, which stops the team too; a silent endpoint's timeout may be the lead's alone).
        const withPostHint = (error: unknown) => (error instanceof ModelError && (!FATAL_MODEL_CODES.has(error.code) || error.code === 'MODEL_TIMEOUT') ? new ModelError(`${error.message} (a requirement goes on the board without the lead's model: /post <requirement>)`, error.code, { cause: error }) : error);
        const reply = await io.askLead(parsed.text).catch((error: unknown) => Promise.reject(withPostHint(error)));
        // What the lead did on the way (its tool lines, from the log) comes before its answer.
        await io.session.catchUp();
        io.print(`lead: ${reply || '(no reply)'}`, 'reply');
        return 'continue';
      }
    }
  } catch (error) {
    io.print(`error: ${serializeError(error).message}`, 'error');
    return 'continue';
  }
}
