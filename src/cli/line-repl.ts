import readline from 'node:readline';
import { DEFAULT_TEAM, type LeadApi, type TeamMemberSpec } from '../core/lead/session.js';
import { activityView, describeSessionEvent } from '../frontend/activity.js';
import { type CommandIO, runLine } from '../frontend/commands.js';
import { onHangup, quitSession, toldByQuit } from '../frontend/quit.js';
import { leftOpenLine, waitForQuiet } from '../frontend/work.js';
import { formatDuration } from '../frontend/format.js';
import { ADDRESSED } from '../frontend/answer.js';
import { counted, oneLine } from '../core/words.js';

export interface LineReplOptions {
  team?: readonly TeamMemberSpec[];
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
  /** At end of input, wait this long at most for work in flight (default 5 min). */
  drainTimeoutMs?: number;
  graceMs?: number;
}

export const DRAIN_TIMEOUT_MS = 5 * 60_000;


/**
 * The REPL without a terminal: one line in, plain lines out, so pipes and scripts work. At end of
 * input it waits (bounded) for what the team is still doing, then quits like /quit. Resolves to the
 * exit status: 1 when input ended and it stopped waiting with work unfinished (a question nobody
 * will answer, or work still going when the wait ran out), or when a line of the input ended in an
 * error, so a script can tell; else 0.
 */
export async function runLineRepl(session: LeadApi, options: LineReplOptions = {}): Promise<0 | 1> {
  const output = options.output ?? process.stdout;
  // Output piped into something that stopped reading (`| tee` closed with its terminal, `| head`):
  // nothing more is printed, and the team is shut down as on Ctrl+C, the board released.
  let outputGone = false;
  // Ctrl+C's stop once the input is read (below); until then, the check after it.
  let stop: () => void = () => undefined;
  const onOutputError = (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    if (outputGone) return;
    outputGone = true;
    stop();
  };
  output.on('error', onOutputError);
  // The header, before the first line said: none when the start fails (another lead holds the
  // board), whose one error line is then all the output.
  let headed = false;
  const print = (text: string) => {
    if (outputGone) return;
    if (!headed) output.write(`autoteam — ${session.modelLabel}\n`);
    headed = true;
    output.write(`${text}\n`);
  };
  // A terminal's width for the one-line model text; 160 columns into a pipe.
  const view = activityView(() => (output as Partial<NodeJS.WriteStream>).columns);
  let quitting = false;
  const unsubscribe = session.subscribe((event) => {
    if (quitting && toldByQuit(event)) return;
    const line = describeSessionEvent(session, event, view);
    if (line) print(line.text);
  });
  // A line whose command or question ended in an error (a lead's model that refused it, a command
  // that does not exist): the script's input was not all done, and the exit status says so.
  let erred = false;
  const failed: string[] = [];
  const io: CommandIO = {
    session,
    print: (text, tone) => {
      erred ||= tone === 'error';
      print(text);
    },
    askLead: (text) => session.ask(text),
    view,
  };

  const started = options.team ?? DEFAULT_TEAM;
  await session.start(started);
  const { team } = session.snapshot();
  print(`board ${session.where} · team ${team.name} · lead ${team.lead}${session.autoAnswer ? ' · auto answers on' : ''}`);
  // Who was started (a pipe has no team panel; one refused was said above); each thread reports in a moment later.
  const running = new Set(team.members.filter((member) => member.running).map((member) => member.name));
  const begun = started.filter((member) => running.has(member.name));
  print(begun.length ? `started ${begun.map((member) => `${member.name} (${member.role})`).join(', ')}` : 'no teammates — /spawn <name> <role>');

  const lines = readline.createInterface({ input: options.input ?? process.stdin, terminal: false });
  // Its lines followed from now: an interface closed before its iterator was made (output gone
  // before the first line was read) ended no loop, and the process waited for good, signals too.
  const incoming = lines[Symbol.asyncIterator]();
  // Ctrl+C ends the input, and the wait for work in flight too; SIGTERM (kill, a service manager) and
  // SIGHUP (the terminal closed) the same.
  const interrupt = new AbortController();
  const onSigint = () => {
    interrupt.abort();
    lines.close();
  };
  stop = onSigint;
  if (outputGone) onSigint();
  const onSigterm = () => {
    print('terminated');
    onSigint();
  };
  process.once('SIGINT', onSigint);
  process.once('SIGTERM', onSigterm);
  const offHangup = onHangup(() => {
    print('hung up');
    onSigint();
  });
  // Only now: whoever waits for this line to send a signal finds it handled.
  print('Type /help for commands, or a requirement for the lead.');
  // Until the team asks something or is done; what the log holds of its work printed before the next line's output.
  const settle = async () => {
    await waitForQuiet(session, options.drainTimeoutMs ?? DRAIN_TIMEOUT_MS, undefined, interrupt.signal);
    await session.catchUp();
  };
  let quit = false;
  for await (const line of incoming) {
    // A comment in a script, as in `run --file`, while no question waits (then a line is its answer,
    // `#336699` too); never `#2 yes` or `#2: yes`, which answer pipeline #2.
    const text = line.trim();
    if (text.startsWith('#') && !ADDRESSED.test(text) && session.pendingQuestions().length === 0) continue;
    // Work still moving that this process did not start from its input (left on the board by the last
    // session, a lead that died with a question out) is waited for as the work of a line is, below:
    // a line of text (a requirement, an answer) then meets the question that work asks, not a gap.
    // (Not a command: `/post` and `/answer` say what they are.)
    const plain = Boolean(text) && !text.startsWith('/');
    const starts = plain || /^\/(post|answer)\b/.test(text);
    if (plain && session.busyReason() && !interrupt.signal.aborted) await settle();
    erred = false;
    const outcome = await runLine(line, io);
    if (erred) failed.push(text);
    if (outcome === 'quit') {
      quit = true;
      break;
    }
    // Scripts feed answers as the lines after a requirement: after a line that starts or answers
    // work, wait until the team asks something or is done before reading the next line.
    if (starts && !interrupt.signal.aborted) await settle();
  }
  lines.close();
  let unfinished = false;
  if (!quit && !interrupt.signal.aborted) {
    const timeoutMs = options.drainTimeoutMs ?? DRAIN_TIMEOUT_MS;
    const say = (reason: string) => print(`end of input: waiting for the team (${reason}; at most ${formatDuration(timeoutMs)}, Ctrl+C to stop)…`);
    const left = await waitForQuiet(session, timeoutMs, say, interrupt.signal);
    if (left) print(`${interrupt.signal.aborted ? 'interrupted' : 'gave up waiting'}: ${left}`);
    const question = session.pendingQuestions()[0];
    if (question && !session.autoAnswer) print(`not waiting: ${question.from} asks "${question.question}" and input has ended (answer in the input, or use --auto)`);
    const plan = session.snapshot().plans[0];
    if (plan) print(`not waiting: ${plan.from}'s plan ${plan.id} waits for a decision and input has ended (/approve or /reject in the input)`);
    // Ctrl+C during the wait is the person's stop, as at any other time; the wait running out, or a
    // question or a plan left for nobody, is work the script did not get done.
    unfinished = Boolean((left && !interrupt.signal.aborted) || (question && !session.autoAnswer) || plan);
    // Quiet with a pipeline still active: its next step is for a role nobody here takes (its teammates
    // shut down), or the team stopped. The board keeps it; the script is told, and the status says so.
    const open = unfinished || interrupt.signal.aborted ? null : leftOpenLine(session);
    if (open) print(open);
    unfinished ||= open !== null;
  }
  if (failed.length) print(`not done: ${counted(failed.length, 'line')} of the input failed (the first: ${JSON.stringify(oneLine(failed[0]!, 80))}; its error is above)`);
  process.off('SIGINT', onSigint);
  process.off('SIGTERM', onSigterm);
  await session.catchUp();
  print('shutting the team down…');
  quitting = true;
  for (const line of await quitSession(session, options.graceMs)) print(line);
  offHangup();
  // 'bye' is the last line: a late event (a worker's final message) is not printed after it.
  unsubscribe();
  print('bye');
  return unfinished || failed.length ? 1 : 0;
}
