import type { HandMerge, LeadApi } from '../core/lead/lead-api.js';

/** What /merge and /discard use of a front end (commands.ts's CommandIO). */
interface MergeIO {
  session: Pick<LeadApi, 'mergeQueue' | 'catchUp'>;
  print(text: string): void;
}

/** /merge all: the queue drained once, each line as it is said (a wait for another merger at once), after the steps (from the log) that led to it. */
export async function drainQueue(io: MergeIO): Promise<void> {
  let said = Promise.resolve();
  await io.session.mergeQueue((line) => void (said = said.then(() => io.session.catchUp()).then(() => io.print(line))));
  return said;
}

/** /merge <n>, /discard <n>: a drain under way waited out (its wait said at once), then the line, after that drain's steps from the log. */
export async function byHand(io: MergeIO, act: (options: HandMerge) => Promise<string>): Promise<void> {
  const line = await act({ onLine: (said) => io.print(said), patient: true });
  await io.session.catchUp();
  io.print(line);
}
