import { render } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import type { LeadSession } from '../../src/core/lead/session.js';
import { App } from '../../src/ui/app.js';
import { ActivityFeed, BoardStore, QuestionStore, TeamStore } from '../../src/ui/stores.js';
import { boardOf, askLead, quietSession, waitUntil } from '../helpers/repl-session.js';

const ENTER = '\r';
const TAB = '\t';
const CTRL_C = '\u0003';
const CTRL_D = '\u0004';
const HOME = '\u001b[H';
const LEFT = '\u001b[D';
// What a terminal sends around a paste once the app asked for bracketed paste (ESC[?2004h).
const PASTE_START = '\u001b[200~';
const PASTE_END = '\u001b[201~';

interface Mounted {
  session: LeadSession;
  frame(): string;
  type(text: string): Promise<void>;
  until(pattern: RegExp | string, what?: string): Promise<string>;
  asked: string[];
  quits: number[];
  unmount(): void;
}

const mounted: Mounted[] = [];

async function mount(options: { auto?: boolean; leadReply?: string } = {}): Promise<Mounted> {
  const session = await quietSession(options);
  const feed = new ActivityFeed();
  const board = new BoardStore(session, 12, 10);
  const team = new TeamStore(session);
  const questions = new QuestionStore(session);
  const stops = [feed.follow(session), board.follow(), team.follow(), questions.follow()];
  const asked: string[] = [];
  const quits: number[] = [];
  // The lead agent's turn is the one part faked: the session answers free text with a set reply.
  const ask = async (text: string) => {
    asked.push(text);
    return options.leadReply ?? 'noted';
  };
  const api = new Proxy(session, {
    get: (target, key) => {
      if (key === 'ask') return ask;
      const value: unknown = Reflect.get(target, key);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const app = render(
    <App session={api} feed={feed} board={board} team={team} questions={questions} quit={async () => void quits.push(Date.now())} />,
  );
  const frame = () => app.frames.join('\n');
  const m: Mounted = {
    session,
    frame: () => app.lastFrame() ?? '',
    // Each call is one chunk, as a person types a key; the next waits for the frame it causes
    // (bounded: some keys, like Tab with nothing to complete, change nothing).
    type: async (text) => {
      const before = app.frames.length;
      app.stdin.write(text);
      await waitUntil(() => app.frames.length > before, 'a new frame', 300).catch(() => undefined);
    },
    until: (pattern, what) =>
      waitUntil(() => {
        const all = frame();
        return (typeof pattern === 'string' ? all.includes(pattern) : pattern.test(all)) ? all : null;
      }, what ?? String(pattern)),
    asked,
    quits,
    unmount: () => {
      for (const stop of stops) stop();
      app.unmount();
    },
  };
  mounted.push(m);
  // Keys typed before ink listens to stdin would be lost.
  await waitUntil(() => app.stdin.listenerCount('readable') > 0, 'ink to listen to stdin');
  return m;
}

afterEach(async () => {
  for (const m of mounted.splice(0)) {
    m.unmount();
    await m.session.close(500);
  }
});

describe('the REPL app', () => {
  it('shows the header with the model, the board dir and the team', async () => {
    const m = await mount();
    const frame = m.frame();
    expect(frame).toContain('model: offline scripted model — set ANTHROPIC_API_KEY or OPENAI_API_KEY for a real model');
    expect(frame).toContain(`board ${m.session.rootDir}`);
    expect(frame).toContain('lead lead');
    expect(frame).toContain('No tasks yet');
  });

  it("shows a member of another process as the board has it: joined, working, then dead", async () => {
    const m = await mount();
    // An `autoteam worker` in another terminal: it exists only on the board.
    await boardOf(m.session).registry.join('e2', 'engineer', { status: 'idle', pid: 1 });
    await m.session.post('Write a greeting program.');
    await m.until(/e2 \(engineer\) idle/, 'the worker in the team panel');
    await boardOf(m.session).registry.setStatus('e2', 'dead', { reason: 'no heartbeat for 16 s' });
    m.session.emit('event', { type: 'notice', text: 'e2 is dead (no heartbeat for 16 s)' });
    await m.until(/e2 \(engineer\) dead/, 'e2 shown dead');
  });

  it('runs a typed command and prints its output in the activity log', async () => {
    const m = await mount();
    await m.type('/post Write a Python script that organizes my Downloads folder by file type.');
    await m.type(ENTER);
    await m.until(/posted pipeline #1: task #1 \(requirements\)/);
    // The live board panel picks up the new task from the 'board' event.
    await m.until(/\[ \] #1: Analyse: Write a Python script/);
    await m.until('pipeline #1 active');
    await m.type('/tasks');
    await m.type(ENTER);
    await m.until('› /tasks');
  });

  it('completes command names with Tab', async () => {
    const m = await mount();
    await m.type('/ta');
    await m.type(TAB);
    await m.until(/› \/tasks *$/m, 'the completed command');
    await m.type(ENTER);
    await m.until('No tasks.');
    await m.type('/s');
    await m.type(TAB);
    await m.until('/show  /spawn  /shutdown', 'the candidate list');
  });

  it('puts a pending question in front and answers it with a plain line', async () => {
    const m = await mount();
    const question = await askLead(m.session, 'analyst', 'Which file types should be grouped together?', 1);
    await m.until('analyst asks (task #1): Which file types should be grouped together?');
    expect(m.frame()).toContain('type the answer and press Enter');
    await m.type('Images, documents and archives');
    await m.type(ENTER);
    await waitUntil(() => boardOf(m.session).mailbox.peek('analyst').length > 0, 'the answer in the analyst inbox');
    expect(boardOf(m.session).mailbox.peek('analyst')[0]).toMatchObject({ type: 'answer', content: 'Images, documents and archives', questionId: question.questionId });
    await m.until('! person answers analyst: Images, documents and archives');
    await waitUntil(() => !m.frame().includes('analyst asks (task #1)'), 'the question box to close');
    expect(m.asked).toEqual([]);
  });

  it('sends free text to the lead and shows the reply', async () => {
    const m = await mount({ leadReply: 'Posted pipeline #7.' });
    await m.type('Build me a thing');
    await m.type(ENTER);
    await m.until('lead: Posted pipeline #7.');
    expect(m.asked).toEqual(['Build me a thing']);
  });

  it('submits a line that arrives with its newline in one chunk', async () => {
    const m = await mount();
    await m.type('/team\r');
    await m.until(/team \S+ — lead: lead/);
  });

  it('takes a pasted block of several lines as one message, not a line each', async () => {
    const m = await mount({ leadReply: 'Posted pipeline #1.' });
    await m.type('Write a script that organizes my Downloads folder.\nGroup pictures and documents.\nNever overwrite.\n');
    await m.until('lead: Posted pipeline #1.');
    expect(m.asked).toEqual(['Write a script that organizes my Downloads folder.\nGroup pictures and documents.\nNever overwrite.']);
  });

  it('runs each command of a block typed ahead in one chunk, in order; lines that start no command stay with theirs', async () => {
    const m = await mount({ leadReply: 'noted' });
    await m.type('/post Count the words in a file (a)\n/post Count the lines in a file (b)\nand print them\n/tasks\n');
    await m.until('posted pipeline #2: task #2 (requirements)');
    await m.until('› /tasks');
    const tasks = boardOf(m.session).tasks.list();
    expect(tasks.map((task) => task.description)).toEqual(['Count the words in a file (a)', 'Count the lines in a file (b)\nand print them']);
    // /tasks ran after both posts: it lists both.
    await m.until(/› \/tasks[\s\S]*#1: Analyse[\s\S]*#2: Analyse/);
    expect(m.asked).toEqual([]);
  });

  it('inserts a bracketed paste at the cursor with its lines, and submits only on Enter', async () => {
    const m = await mount({ leadReply: 'Posted pipeline #1.' });
    await m.type('by file type.');
    await m.type(HOME);
    await m.type(`${PASTE_START}Write a Python script that organizes my Downloads folder\r\nGroup pictures and documents,\r\n${PASTE_END}`);
    await m.until(/› Write a Python script that organizes my Downloads folder\n\s*Group pictures and documents,\n\s*by file type\./, 'the paste in the prompt');
    // The paste's line breaks were text: nothing went to the lead, no marker reached the line.
    expect(m.asked).toEqual([]);
    expect(m.frame()).not.toContain('[200~');
    expect(m.frame()).not.toContain('[201~');
    await m.type(ENTER);
    await m.until('lead: Posted pipeline #1.');
    expect(m.asked).toEqual(['Write a Python script that organizes my Downloads folder\nGroup pictures and documents,\nby file type.']);
  });

  it('keeps a paste that arrives in several chunks, a lone line break among them, as one entry', async () => {
    const m = await mount();
    await m.type('ab');
    await m.type(LEFT);
    await m.type(`${PASTE_START}one`);
    await m.type('\r');
    await m.type(`two${PASTE_END}`);
    await m.until(/› aone\n\s*twob/, 'the paste between a and b');
    expect(m.asked).toEqual([]);
    await m.type(ENTER);
    await waitUntil(() => m.asked.length === 1, 'the submission');
    expect(m.asked).toEqual(['aone\ntwob']);
  });

  it('answers a pending question with a pasted block once Enter is pressed', async () => {
    const m = await mount();
    const question = await askLead(m.session, 'analyst', 'Which folders?', 1);
    await m.until('analyst asks (task #1): Which folders?');
    await m.type(`${PASTE_START}Images: jpg, png\rDocuments: pdf, docx\r${PASTE_END}`);
    await m.until(/Documents: pdf, docx/, 'the pasted answer in the prompt');
    expect(boardOf(m.session).mailbox.peek('analyst')).toEqual([]);
    await m.type(ENTER);
    await waitUntil(() => boardOf(m.session).mailbox.peek('analyst').length > 0, 'the answer');
    expect(boardOf(m.session).mailbox.peek('analyst')[0]).toMatchObject({ type: 'answer', content: 'Images: jpg, png\nDocuments: pdf, docx', questionId: question.questionId });
  });

  it('quits on q, exit and quit, as the lesson\'s REPL does', async () => {
    const m = await mount();
    await m.type('exit');
    await m.type(ENTER);
    await waitUntil(() => m.quits.length === 1, 'quit');
    await m.until('bye');
  });

  it('submits the typed line when Enter comes before the next frame', async () => {
    const m = await mount();
    m.type('Organize my Downloads folder'); // not awaited: Enter follows at once, as under load
    await m.type(ENTER);
    await m.until('lead: noted');
    expect(m.asked).toEqual(['Organize my Downloads folder']);
  });

  it('hints at the closest command for an unknown one', async () => {
    const m = await mount();
    await m.type('/tsks');
    await m.type(ENTER);
    await m.until('unknown command /tsks — did you mean /tasks?');
  });

  it('quits on /quit', async () => {
    const m = await mount();
    await m.type('/quit');
    await m.type(ENTER);
    await waitUntil(() => m.quits.length === 1, 'quit');
    await m.until('bye');
  });

  it('quits on Ctrl+C at an empty prompt; with a line typed, Ctrl+C clears it first, as a shell does', async () => {
    const m = await mount();
    await m.type('some half typed text');
    await m.until(/› some half typed text *$/m, 'the typed line');
    await m.type(CTRL_C);
    await m.until('line cleared: Ctrl+C again quits', 'the hint');
    await m.until('a requirement for the lead', 'the empty prompt');
    expect(m.quits).toEqual([]);
    await m.type(CTRL_C);
    await waitUntil(() => m.quits.length === 1, 'quit');
  });

  it('quits on SIGTERM as on /quit, once, even when /quit follows', async () => {
    const m = await mount();
    const before = process.listenerCount('SIGTERM');
    expect(before).toBeGreaterThanOrEqual(1);
    process.emit('SIGTERM');
    await waitUntil(() => m.quits.length === 1, 'quit');
    await m.until('terminated');
    await m.until('bye');
    await m.type('/quit');
    await m.type(ENTER);
    expect(m.quits).toHaveLength(1);
  });

  it('quits on a SIGINT sent to the process (kill -INT) as on /quit: the keyboard\'s Ctrl+C is a key, this one a signal', async () => {
    const others = process.listeners('SIGINT');
    const m = await mount();
    // The app's own handler, called as the signal would: emitting SIGINT would reach the test runner's
    // and ink's exit hooks too (which raise the signal again).
    const own = () => process.listeners('SIGINT').filter((listener) => !others.includes(listener) && String(listener).includes('interrupted'));
    expect(own()).toHaveLength(1);
    own()[0]!('SIGINT');
    await waitUntil(() => m.quits.length === 1, 'quit');
    await m.until('interrupted');
    await m.until('bye');
    // Once: a second SIGINT finds no handler of the app's and ends the process.
    expect(own()).toEqual([]);
  });

  it('edits the line with Ctrl+A, Ctrl+K, Ctrl+E, Ctrl+W and Ctrl+U, each sent alone as a terminal sends a key', async () => {
    const m = await mount();
    await m.type('/tasks now');
    for (const key of ['\x01', 'X', '\x0b']) await m.type(key);
    await m.until(/› X *$/m, 'Ctrl+K killed the rest of the line after X');
    for (const key of ['\x01', '/team ', '\x05', ' two', '\x17']) await m.type(key);
    await m.until(/› \/team X *$/m, "Ctrl+W deleted the last word, X's start kept");
    await m.type('\x15');
    await m.until('a requirement for the lead', 'Ctrl+U cleared the line');
  });

  it('quits on Ctrl+D at an empty prompt, and leaves a typed line alone', async () => {
    const m = await mount();
    await m.type('/ta');
    await m.type(CTRL_D);
    await m.type(TAB);
    await m.until(/› \/tasks *$/m, 'the line without a stray d');
    expect(m.quits).toEqual([]);
    await m.type(ENTER);
    await m.until('No tasks.');
    await waitUntil(() => m.frame().includes('a requirement for the lead'), 'an empty prompt');
    await m.type(CTRL_D);
    await waitUntil(() => m.quits.length === 1, 'quit');
  });
});
