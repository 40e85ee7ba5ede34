import type { LeadEvent } from '../core/lead/session.js';
import type { TeammateExit } from '../core/agent/manager.js';
import type { Tone } from './commands.js';

export interface ActivityLine {
  text: string;
  tone: Tone;
}

/** How a front end shows what the models say: one line per turn, cut to `width`, or (verbose) whole turns. */
export interface ActivityView {
  verbose: boolean;
  /** Columns a line may take: the terminal's, or 160 where there is none. */
  readonly width: number;
}

/** A view for a front end: `columns` is asked each time, so a resized terminal is followed. */
export function activityView(columns: () => number | undefined = () => undefined, verbose = false): ActivityView {
  return {
    verbose,
    get width() {
      return columns() || 160;
    },
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

/** What a session event looks like in the activity stream; null for events shown elsewhere (status, board). */
export function describeEvent(event: LeadEvent, view: Pick<ActivityView, 'verbose' | 'width'> = { verbose: false, width: 160 }): ActivityLine | null {
  const line = describeOne(event, view);
  // A line of several (a pasted answer, a whole model turn) keeps its continuation under its text.
  return line?.text.includes('\n') ? { ...line, text: indentContinuation(line.text) } : line;
}

export function indentContinuation(text: string): string {
  return text.replace(/\n/g, '\n  ');
}

function describeOne(event: LeadEvent, view: Pick<ActivityView, 'verbose' | 'width'>): ActivityLine | null {
  switch (event.type) {
    case 'teammate': {
      const teammate = event.event;
      if (teammate.type === 'activity') return { text: `[${teammate.name}] ${teammate.text}`, tone: 'activity' };
      if (teammate.type === 'says') return { text: saysLine(teammate.name, teammate.text, view), tone: 'says' };
      if (teammate.type === 'error') return { text: `[${teammate.name}] error ${teammate.error.code}: ${teammate.error.message}`, tone: 'error' };
      if (teammate.type === 'log') {
        const text = teammate.text.trimEnd();
        return text ? { text: `[${teammate.name} ${teammate.stream}] ${text}`, tone: teammate.stream === 'stderr' ? 'error' : 'activity' } : null;
      }
      return null;
    }
    case 'teammate_exit':
      return describeExit(event.exit);
    case 'question':
      return { text: `? ${event.question.from} asks: ${event.question.question}`, tone: 'question' };
    case 'question_withdrawn':
      return { text: `? ${event.question.from}'s question withdrawn (${event.reason}): ${event.question.question}`, tone: 'info' };
    case 'answered':
      return { text: `! ${event.by} answers ${event.question.from}: ${event.answer}`, tone: 'answer' };
    case 'pipeline':
      return { text: `= ${event.content}`, tone: 'pipeline' };
    case 'plan':
      return { text: `plan ${event.requestId} from ${event.from}: ${event.plan}  → /approve ${event.requestId} or /reject ${event.requestId} <why>`, tone: 'question' };
    case 'message':
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
