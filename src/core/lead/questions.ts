import type { EventLog } from '../events/log.js';
import type { Message, Task } from '../board/schemas.js';
import type { TeamEvent } from '../events/schema.js';

/** A teammate's question waiting for the person (or the simulated user). */
export interface PendingQuestion {
  questionId: string;
  from: string;
  question: string;
  task: number | null;
  pipeline: number | null;
  at: string;
}

/** The question a `question` message asks. */
export function questionOf(message: Message): PendingQuestion {
  return {
    questionId: String(message.questionId ?? message.id),
    from: message.from,
    question: message.content,
    task: typeof message.task === 'number' ? message.task : null,
    pipeline: typeof message.pipeline === 'number' ? message.pipeline : null,
    at: message.at,
  };
}

/**
 * Questions asked but never answered, as the board records them: an `asked` event with no
 * `answered` after it on an open task (the last lead was killed while one was pending). The next
 * line the person types answers them.
 */
export function unansweredOnBoard(tasks: readonly Task[]): PendingQuestion[] {
  const questions: PendingQuestion[] = [];
  for (const task of tasks) {
    if (task.status !== 'pending' && task.status !== 'in_progress') continue;
    const asked = task.history.findLastIndex((entry) => entry.event === 'asked');
    if (asked < 0 || task.history.slice(asked).some((entry) => entry.event === 'answered')) continue;
    const entry = task.history[asked]!;
    questions.push({
      questionId: `q-${task.id}-${(task.artifacts.qa ?? []).length + 1}`,
      from: entry.by,
      question: entry.detail ?? '(the question was not recorded)',
      task: task.id,
      pipeline: task.pipeline,
      at: entry.at,
    });
  }
  return questions;
}

/**
 * Keeps `answered` to the questions whose last word on the log is an answer: an answer (from anyone,
 * before or after a lead followed the log) adds its question, the same question asked again (another
 * attempt at its task), or withdrawn, takes it away.
 */
export function noteAnswer(answered: Set<string>, event: TeamEvent): void {
  if (event.type === 'question_answered') answered.add(event.questionId);
  // Asked again, or its answer never delivered (logged before it was sent): open again, unless its task closed.
  if (event.type === 'question_asked' || event.type === 'question_withdrawn') answered.delete(event.questionId);
}

/**
 * What the log says of the questions the board shows unanswered, read only when there are some: those
 * answered since they were last asked (while no lead ran: noteAnswer), and those asked after `since`
 * (the seq this session's log view follows from: it shows their `question_asked`, so they are not left
 * by the last session). A log that cannot be read takes none away and counts none as new.
 */
export async function questionsInLog(log: Pick<EventLog, 'read'>, questions: readonly PendingQuestion[], since: number): Promise<{ answered: Set<string>; askedNow: Set<string> }> {
  const found = { answered: new Set<string>(), askedNow: new Set<string>() };
  if (questions.length === 0) return found;
  try {
    for (const event of await log.read({ types: ['question_asked', 'question_answered', 'question_withdrawn'] })) {
      noteAnswer(found.answered, event);
      if (event.type === 'question_asked' && (event.seq ?? 0) > since) found.askedNow.add(event.questionId);
    }
  } catch {
    found.answered.clear();
    found.askedNow.clear();
  }
  return found;
}
