import type { LeadEvent } from '../core/lead/session.js';
import type { TeammateExit } from '../core/agent/manager.js';
import type { Tone } from './commands.js';

export interface ActivityLine {
  text: string;
  tone: Tone;
}

/** What a session event looks like in the activity stream; null for events shown elsewhere (status, board). */
export function describeEvent(event: LeadEvent): ActivityLine | null {
  switch (event.type) {
    case 'teammate': {
      const teammate = event.event;
      if (teammate.type === 'activity') return { text: `[${teammate.name}] ${teammate.text}`, tone: 'activity' };
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
