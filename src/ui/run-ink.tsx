import { render } from 'ink';
import { DEFAULT_TEAM, type LeadApi, type TeamMemberSpec } from '../core/lead/session.js';
import { serializeError } from '../core/errors.js';
import { activityView } from '../frontend/activity.js';
import { onHangup, quitSession } from '../frontend/quit.js';
import { App } from './app.js';
import { BRACKETED_PASTE_OFF, BRACKETED_PASTE_ON } from './line-editor.js';
import { ActivityFeed, BoardStore, QuestionStore, TeamStore } from './stores.js';

export interface InkReplOptions {
  team?: readonly TeamMemberSpec[];
  graceMs?: number;
}

/** Mounts the ink REPL on a terminal, starts the team, and returns once the person has quit. */
export async function runInk(session: LeadApi, options: InkReplOptions = {}): Promise<void> {
  const feed = new ActivityFeed(activityView(() => process.stdout.columns));
  const board = new BoardStore(session);
  const team = new TeamStore(session);
  const questions = new QuestionStore(session);
  // The stores subscribe before the team starts, so no early event is lost.
  const unfollow = [feed.follow(session), board.follow(), team.follow(), questions.follow()];
  feed.push('Type a requirement for the lead, or /help. Tab completes commands; Ctrl+C or Ctrl+D quits.', 'info');

  // Once, however it is asked for; awaited below, so that a frame that ends early (its terminal gone)
  // does not cut the shutdown short.
  let leaving: Promise<void> | null = null;
  const quit = () =>
    (leaving ??= (async () => {
      feed.quitting = true;
      for (const line of await quitSession(session, options.graceMs)) feed.push(line, 'info');
      // The last frame stays on the screen: it shows the board and team as the shutdown left them
      // (tasks handed back, teammates gone), not as they were when /quit was typed.
      questions.closed();
      try {
        board.refresh();
        team.reload();
      } catch {
        // a board that cannot be read now keeps its last view
      }
    })());
  // The terminal marks pastes from now on, so a pasted line break is text, not an Enter (input-line.tsx);
  // it is told to stop however the process ends, or the shell after it would see the marks. Told before
  // the first frame: a paste that follows the prompt at once is marked too.
  const pasteOff = () => process.stdout.write(BRACKETED_PASTE_OFF);
  process.stdout.write(BRACKETED_PASTE_ON);
  process.once('exit', pasteOff);
  const instance = render(<App session={session} feed={feed} board={board} team={team} questions={questions} quit={quit} />, {
    exitOnCtrlC: false,
  });
  const members = options.team ?? DEFAULT_TEAM;
  try {
    await session.start(members);
    team.reload();
    board.refresh();
    team.started(members.length);
  } catch (error) {
    feed.push(`could not start the team: ${serializeError(error).message}`, 'error');
    team.started(0);
  }
  // The terminal closed: nothing can be drawn any more, so the frame goes at once, and the shutdown
  // runs to its end below, with the handler kept until then (a second SIGHUP comes from the shell).
  const offHangup = onHangup(() => {
    instance.unmount();
    void quit();
  });
  try {
    await instance.waitUntilExit();
  } finally {
    await quit();
    offHangup();
  }
  for (const stop of unfollow) stop();
  instance.cleanup();
  process.off('exit', pasteOff);
  pasteOff();
}
