import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { COMMAND_NAMES, type CommandIO, closestCommand, complete, helpText, parseLine, runLine, splitCommands } from '../../src/frontend/commands.js';
import type { LeadSession } from '../../src/core/lead/session.js';
import { activityView, describeEvent } from '../../src/frontend/activity.js';
import { boardOf, askLead, quietSession, waitUntil } from '../helpers/repl-session.js';

/** Resolves when the session tells a message for the person (one it keeps for /inbox), or a plan (`type`). */
function messageTold(session: LeadSession, type: 'message' | 'plan' = 'message'): Promise<void> {
  return new Promise((resolve) => {
    const stop = session.subscribe((event) => {
      if (event.type !== type) return;
      stop();
      resolve();
    });
  });
}

describe('completion and parsing', () => {
  it('completes a unique prefix with a trailing space', () => {
    expect(complete('/ta')).toEqual({ line: '/tasks ', candidates: ['tasks'] });
    expect(complete('/q').line).toBe('/quit ');
    expect(complete('/APP').line).toBe('/approve ');
  });

  it('completes several candidates to their common prefix and lists them', () => {
    expect(complete('/s')).toEqual({ line: '/s', candidates: ['show', 'spawn', 'shutdown'] });
    expect(complete('/sh')).toEqual({ line: '/sh', candidates: ['show', 'shutdown'] });
    expect(complete('/shu').line).toBe('/shutdown ');
    expect(complete('/').candidates).toEqual(COMMAND_NAMES);
  });

  it('leaves arguments and plain text alone', () => {
    expect(complete('/post some text')).toEqual({ line: '/post some text', candidates: [] });
    expect(complete('hello')).toEqual({ line: 'hello', candidates: [] });
    expect(complete('/zzz')).toEqual({ line: '/zzz', candidates: [] });
  });

  it('hints at the closest command for a typo', () => {
    expect(closestCommand('tsks')).toBe('tasks');
    expect(closestCommand('quti')).toBe('quit');
    expect(closestCommand('inbx')).toBe('inbox');
    const parsed = parseLine('/tsks', false);
    expect(parsed).toMatchObject({ kind: 'unknown', hint: 'unknown command /tsks — did you mean /tasks? (/help lists them)' });
  });

  it('sends a plain line to the lead, or answers when a question waits', () => {
    expect(parseLine('build me a thing', false)).toEqual({ kind: 'lead', text: 'build me a thing' });
    expect(parseLine('  yes, please  ', true)).toEqual({ kind: 'answer', text: 'yes, please' });
    expect(parseLine('   ', true)).toEqual({ kind: 'empty' });
    expect(parseLine('/post  Write it', true)).toMatchObject({ kind: 'command', args: 'Write it' });
  });

  it('splits a block at the lines that start a command, and only there', () => {
    expect(splitCommands('/inbox\n/team\n/tasks')).toEqual(['/inbox', '/team', '/tasks']);
    expect(splitCommands('/post Sort my files\nby type\n/post Count words')).toEqual(['/post Sort my files\nby type', '/post Count words']);
    // A command that takes nothing does not take the lines after it: they are the next part.
    expect(splitCommands('first line\n/tasks\nsecond line\nand more')).toEqual(['first line', '/tasks', 'second line\nand more']);
    expect(splitCommands('/team\n\n/post x\ny')).toEqual(['/team', '/post x\ny']);
    // A path or an unknown word at a line's start is text, not a command.
    expect(splitCommands('Copy it to\n/usr/local/bin\n/nosuch thing')).toEqual(['Copy it to\n/usr/local/bin\n/nosuch thing']);
    expect(splitCommands('Write a script\n/tasks')).toEqual(['Write a script', '/tasks']);
    expect(splitCommands('  \n ')).toEqual([]);
  });

  it('documents every command in /help', () => {
    const help = helpText([], 200);
    for (const name of COMMAND_NAMES) expect(help).toContain(`/${name}`);
    // One column for the descriptions, the last row included; /tasks names every mark it shows.
    const columns = new Set(help.split('\n').slice(1).map((line) => /^ {2}\S.*?\s{2,}(?=\S)/.exec(line)?.[0].length));
    expect([...columns]).toEqual([30]);
    expect(help).toContain('[-] cancelled');
  });

  it('wraps /help to the terminal, each text under its column, the lead\'s tools included', () => {
    const tools = ['bash', 'read_file', 'write_file', 'edit_file', 'create_task', 'list_tasks', 'get_task', 'update_task', 'claim_task', 'complete_task', 'send_message', 'broadcast', 'idle'];
    const wide = helpText(tools, 200).split('\n');
    const narrow = helpText(tools, 80).split('\n');
    expect(wide.at(-1)).toBe(`${' '.repeat(30)}the lead's tools: ${tools.join(', ')}`);
    expect(narrow.length).toBeGreaterThan(wide.length);
    for (const line of narrow) expect(line.length, line).toBeLessThanOrEqual(79);
    // A line that goes on a row's text starts under that text, never at column 0.
    for (const line of narrow.slice(1)) expect(line, line).toMatch(/^ {2}\/\S|^ {2}anything else|^ {30}\S/);
    // Nothing lost or reordered: the wrapped text reads as the wide one.
    const words = (lines: string[]) => lines.join(' ').split(/\s+/).filter(Boolean);
    expect(words(narrow)).toEqual(words(wide));
    expect(narrow.join(' ').replace(/\s+/g, ' ')).toContain(`the lead's tools: ${tools.join(', ')}`);
  });
});

describe('runLine on a real session', () => {
  let session: LeadSession | null = null;
  afterEach(async () => {
    await session?.close(500);
    session = null;
  });

  function io(s: LeadSession, leadReply = 'ok') {
    const out: string[] = [];
    const asked: string[] = [];
    const value: CommandIO = {
      session: s,
      print: (text) => out.push(text),
      askLead: async (text) => {
        asked.push(text);
        return leadReply;
      },
    };
    return { value, out, asked };
  }

  it('posts, lists and shows tasks', async () => {
    session = await quietSession();
    const { value, out } = io(session);
    expect(await runLine('/post Write a Python script that organizes my Downloads folder by file type.', value)).toBe('continue');
    expect(out.at(-1)).toMatch(/^posted pipeline #1: task #1 \(requirements\)/);
    await runLine('/tasks', value);
    expect(out.at(-1)).toMatch(/^\[ \] #1: Analyse: Write a Python script .*\(requirements\)\npipeline #1 active · 0 model calls · 0 tokens$/);
    await runLine('/show #1', value);
    expect(JSON.parse(out.at(-1)!)).toMatchObject({ id: 1, stage: 'requirements', status: 'pending' });
    await runLine('/show 99', value);
    expect(out.at(-1)).toMatch(/^error: /);
    await runLine('/show abc', value);
    expect(out.at(-1)).toBe("error: a task id is a positive whole number, got 'abc'");
  });

  it("names the lead's inbox lines it could not read in /inbox, and counts them for the team panel", async () => {
    session = await quietSession();
    const { value, out } = io(session);
    await boardOf(session).registry.join('analyst', 'analyst');
    const inbox = boardOf(session).mailbox.inboxPath(session.lead);
    const good = JSON.stringify({ id: 'm1', type: 'message', from: 'analyst', to: 'lead', content: 'hello lead', at: new Date().toISOString() });
    fs.writeFileSync(inbox, ['{"type": "message", "from": "analyst"', good, '[1, 2]', ''].join('\n'));
    const notices: string[] = [];
    session.on('event', (event) => {
      if (event.type === 'notice') notices.push(event.text);
    });
    const told = messageTold(session);
    session.drainInbox();
    await told;
    const moved = path.join('.team', 'inbox', 'lead.rejected.jsonl');
    expect(notices).toEqual([`2 unreadable lines of the lead's inbox moved to ${moved} (/inbox shows which)`]);
    await runLine('/inbox', value);
    expect(out.at(-1)).toMatch(
      new RegExp(`^Inbox:\\n {2}2 unreadable lines moved to ${moved.replace(/\./g, '\\.')}: line 1: not valid JSON \\([^)]*\\); line 3: \\(root\\): [^\\n]+\\n {2}analyst: hello lead$`),
    );
    await runLine('/inbox', value);
    expect(out.at(-1)).toBe('Inbox empty.');
    expect(await session.rejectedCounts()).toEqual({ lead: 2 });
  });

  it('answers a pending question with a plain line, through the protocol', async () => {
    session = await quietSession();
    const { value, asked } = io(session);
    const question = await askLead(session, 'analyst', 'Which folders?', 1);
    await runLine('Images and Documents', value);
    expect(asked).toEqual([]);
    expect(session.pendingQuestions().length).toBe(0);
    const [answer] = boardOf(session).mailbox.peek('analyst');
    expect(answer).toMatchObject({ type: 'answer', from: 'lead', content: 'Images and Documents', questionId: question.questionId });
  });

  it("answers pipeline N's question with a line '#N answer', and sends nothing for a pipeline with none waiting", async () => {
    session = await quietSession();
    const { value, out, asked } = io(session);
    const board = boardOf(session);
    for (const [name, pipeline] of [['analyst', 1], ['analyst-2', 2]] as const) {
      await board.registry.join(name, 'analyst');
      await board.mailbox.send(name, session.lead, `Question for #${pipeline}?`, 'question', { questionId: `q-${pipeline}`, task: null, pipeline });
    }
    session.drainInbox();
    await waitUntil(() => session!.pendingQuestions().length === 2 || undefined, 'both questions');
    // /inbox names each question's pipeline, and how to answer it.
    await runLine('/inbox', value);
    expect(out.at(-1)).toBe("Inbox:\n  analyst asks (pipeline #1): Question for #1?  → type '#1 <answer>'\n  analyst-2 asks (pipeline #2): Question for #2?  → type '#2 <answer>'");
    await runLine('#5 Images only', value);
    expect(out.at(-1)).toBe('error: pipeline #5 has no question waiting (#1, #2 have one): the answer was not sent');
    expect(session.pendingQuestions()).toHaveLength(2);
    // `#2` alone is no answer, neither to #2's question nor to the one in front.
    for (const bare of ['#2', '#2   ', '/answer #1']) {
      await runLine(bare, value);
      expect(out.at(-1)).toBe(`error: #${bare.includes('1') ? 1 : 2} needs the answer after it: #${bare.includes('1') ? 1 : 2} <answer>; nothing was sent`);
    }
    expect(session.pendingQuestions()).toHaveLength(2);
    expect([...board.mailbox.peek('analyst'), ...board.mailbox.peek('analyst-2')]).toEqual([]);
    // The second pipeline's, though the first one's is in front (`#2:` as well as `#2`).
    await runLine('#2: A file path', value);
    expect(session.pendingQuestions().map((question) => question.pipeline)).toEqual([1]);
    expect(board.mailbox.peek('analyst-2')).toEqual([expect.objectContaining({ type: 'answer', content: 'A file path', questionId: 'q-2' })]);
    expect(board.mailbox.peek('analyst')).toEqual([]);
    await runLine('/answer #1 Images and Documents', value);
    expect(board.mailbox.peek('analyst')).toEqual([expect.objectContaining({ type: 'answer', content: 'Images and Documents', questionId: 'q-1' })]);
    expect(session.pendingQuestions()).toEqual([]);
    // With no question waiting, a line meant as an answer is not a requirement for the lead.
    await runLine('#1 Images only', value);
    expect(out.at(-1)).toBe('error: no question is waiting for an answer: nothing was sent (a requirement that starts with #1 goes on the board with /post)');
    expect(asked).toEqual([]);
  });

  it('a plain line answers the question in front when its typing began; one that went away meanwhile is sent to no other, and one begun with none is for the lead', async () => {
    session = await quietSession();
    const { value, out, asked } = io(session, 'Noted.');
    const board = boardOf(session);
    for (const [name, pipeline] of [['analyst', 1], ['analyst-2', 2], ['analyst-3', 3]] as const) {
      await board.registry.join(name, 'analyst');
      await board.mailbox.send(name, session.lead, `Question for #${pipeline}?`, 'question', { questionId: `q-${pipeline}`, task: null, pipeline });
    }
    session.drainInbox();
    await waitUntil(() => session!.pendingQuestions().length === 3 || undefined, 'three questions');
    const [first, second] = session.pendingQuestions();
    // Typing began with #1's question in front; it is answered elsewhere (the web board) before Enter.
    await session.answer('From the web board', first!.questionId);
    await runLine('Read the file named by the first argument', value, first);
    expect(out.at(-1)).toBe("error: analyst's question (pipeline #1) went away while you typed (answered elsewhere, or its task ended): nothing was sent (↑ brings the line back)");
    expect(session.pendingQuestions().map((question) => question.pipeline)).toEqual([2, 3]);
    expect(board.mailbox.peek('analyst-2')).toEqual([]);
    // Begun with #3's in front (as shown then): it goes to #3, though #2's is in front now.
    const third = session.pendingQuestions()[1]!;
    await runLine('Images only', value, third);
    expect(board.mailbox.peek('analyst-3')).toEqual([expect.objectContaining({ type: 'answer', content: 'Images only', questionId: 'q-3' })]);
    expect(board.mailbox.peek('analyst-2')).toEqual([]);
    // Begun with no question in front: a message for the lead, not an answer to the one that came meanwhile.
    await runLine('Write a tool', value, null);
    expect(asked).toEqual(['Write a tool']);
    expect(session.pendingQuestions().map((question) => question.questionId)).toEqual([second!.questionId]);
  });

  it('sends free text to the lead when nothing is asked, and prints the reply', async () => {
    session = await quietSession();
    const { value, out, asked } = io(session, 'Posted pipeline #1.');
    await runLine('Write a tool', value);
    expect(asked).toEqual(['Write a tool']);
    expect(out).toEqual(['lead: Posted pipeline #1.']);
  });

  it("shows the team that is there, and who left since this process began, not an earlier session's members", async () => {
    session = await quietSession();
    const { value, out } = io(session);
    const board = boardOf(session);
    await board.registry.join('analyst', 'analyst');
    await board.registry.join('engineer-4', 'engineer');
    await board.registry.setStatus('engineer-4', 'shutdown', { reason: 'idle for 60 s' });
    // engineer-7 left before this process began (an earlier run's copy), its record still in the team config.
    const config = path.join(session.rootDir, '.team', 'config.json');
    const doc = JSON.parse(fs.readFileSync(config, 'utf8')) as { members: Array<Record<string, unknown>> };
    doc.members.push({ name: 'engineer-7', role: 'engineer', status: 'shutdown', task: null, since: '2026-01-01T00:00:00.000Z', pid: 1, host: 'gone', reason: 'shutdown requested by lead' });
    fs.writeFileSync(config, JSON.stringify(doc));
    await runLine('/team', value);
    expect(out.at(-1)).toMatch(/^team \S+ — lead: lead\n {2}analyst \(analyst\): idle\n {2}engineer-4 \(engineer\): shutdown — idle for 60 s$/);
    expect(session.snapshot().team.members.map((member) => member.name)).toEqual(['analyst', 'engineer-4']);
  });

  it('drains the inbox once, shows the team, toggles auto answers, quits', async () => {
    session = await quietSession();
    const { value, out } = io(session);
    await boardOf(session).registry.join('analyst', 'analyst');
    await boardOf(session).mailbox.send('analyst', 'lead', 'hello lead');
    const told = messageTold(session);
    session.drainInbox();
    await told;
    await runLine('/inbox', value);
    expect(out.at(-1)).toBe('Inbox:\n  analyst: hello lead');
    await runLine('/inbox', value);
    expect(out.at(-1)).toBe('Inbox empty.');
    await runLine('/team', value);
    expect(out.at(-1)).toMatch(/^team \S+ — lead: lead\n {2}analyst \(analyst\): idle/);
    await runLine('/auto on', value);
    expect(session.autoAnswer).toBe(true);
    await runLine('/auto off', value);
    expect(out.at(-1)).toBe('auto answers: off');
    await runLine('/answer yes', value);
    expect(out.at(-1)).toBe('error: no question is waiting for an answer');
    await runLine('/answer #3 yes', value);
    expect(out.at(-1)).toBe('error: no question is waiting for an answer: nothing was sent (a requirement that starts with #3 goes on the board with /post)');
    await runLine('/approve', value);
    expect(out.at(-1)).toBe('error: no plan is waiting for a decision');
    await runLine('/spawn onlyname', value);
    expect(out.at(-1)).toBe('error: usage: /spawn <name> <role> [instructions]');
    // A quoted name of two words is a bad name, said as one, not a role `name'` that does not exist.
    await runLine("/spawn 'bad name' engineer", value);
    expect(out.at(-1)).toBe("error: invalid teammate name ''bad': at most 64 letters, digits, _ and -");
    await runLine('/reject plan-x', value);
    expect(out.at(-1)).toBe('error: usage: /reject <request-id> <why>');
    await runLine('/approve plan-missing', value);
    expect(out.at(-1)).toBe("error: no request 'plan-missing' is waiting");
    await runLine('/nope', value);
    expect(out.at(-1)).toBe('unknown command /nope (/help lists them)');
    await runLine('/frobnicate', value);
    expect(out.at(-1)).toBe('unknown command /frobnicate (/help lists them)');
    // A command that takes nothing is not run with words it would drop.
    const listed = out.length;
    await runLine('/tasks mine', value);
    expect(out.slice(listed)).toEqual(["/tasks takes nothing after it (got 'mine'; /help lists the commands)"]);
    await runLine('/quit now', value);
    expect(out.at(-1)).toBe("/quit takes nothing after it (got 'now'; /help lists the commands)");
    await runLine('/shutdwon', value);
    expect(out.at(-1)).toBe('unknown command /shutdwon — did you mean /shutdown? (/help lists them)');
    const before = out.length;
    await runLine('/shutdown nobody', value);
    expect(out.slice(before)).toEqual([expect.stringMatching(/^error: 'nobody' is not a member of team '\S+' \(members: analyst\)$/)]);
    await runLine('/shutdown lead', value);
    expect(out.at(-1)).toBe("lead is this session, the team's lead: /quit shuts the whole team down");
    await runLine('/show 99999999999999999999', value);
    expect(out.at(-1)).toBe("error: a task id is a positive whole number of at most 9007199254740991, got '99999999999999999999'");
    expect(await runLine('/quit', value)).toBe('quit');
  });

  it("/shutdown of a role's last live teammate says that the role's tasks now wait; of one of two, it does not", async () => {
    session = await quietSession();
    const { value, out } = io(session);
    const s = session;
    for (const name of ['engineer', 'engineer-2']) s.spawn(name, 'engineer');
    await waitUntil(() => s.snapshot().team.members.filter((member) => member.role === 'engineer' && member.status === 'idle').length === 2 || null, 'both engineers idle');
    let before = out.length;
    await runLine('/shutdown engineer-2', value);
    expect(out.slice(before)).toEqual(['asking engineer-2 to shut down…', expect.stringMatching(/^engineer-2 shut down: [^\n]+$/)]);
    before = out.length;
    await runLine('/shutdown engineer', value);
    expect(out.slice(before)).toEqual([
      'asking engineer to shut down…',
      expect.stringMatching(/^engineer shut down: .+\nno engineer is left running: engineer tasks wait until one is \(\/spawn <name> engineer\)$/),
    ]);
  });

  it('sends one teammate a message with /msg, and lists the team for a name not on it', async () => {
    session = await quietSession();
    const { value, out } = io(session);
    // The analyst shut down; the engineer runs in another process (a live pid, a fresh heartbeat).
    await boardOf(session).registry.join('analyst', 'analyst', { status: 'shutdown', pid: null });
    await boardOf(session).registry.join('engineer', 'engineer', { pid: process.ppid });
    await runLine('/msg analyst   Keep the questions short, please.', value);
    expect(out.at(-1)).toBe('sent to analyst (not running: it reads it when it starts)');
    await runLine('/msg engineer Use the standard library.', value);
    expect(out.at(-1)).toMatch(new RegExp(`^sent to engineer \\(running in process ${process.ppid} on \\S+\\)$`));
    expect(boardOf(session).mailbox.peek('analyst')).toEqual([expect.objectContaining({ type: 'message', from: 'lead', to: 'analyst', content: 'Keep the questions short, please.' })]);
    await runLine('/msg nobody hello', value);
    expect(out.at(-1)).toMatch(/^error: 'nobody' is not a member of team '\S+' \(members: analyst, engineer\)$/);
    await runLine('/msg lead hello', value);
    expect(out.at(-1)).toMatch(/^error: 'lead' is not a member of team/);
    await runLine('/msg analyst', value);
    expect(out.at(-1)).toBe('error: usage: /msg <teammate> <text>');
  });

  it('/verbose shows whole model turns, or one line each; a front end without a stream refuses it', async () => {
    session = await quietSession();
    const { value, out } = io(session);
    await runLine('/verbose on', value);
    expect(out.at(-1)).toBe('error: this front end shows no activity stream');
    const view = activityView(() => 60);
    const withView = { ...value, view };
    const says = {
      type: 'team',
      event: {
        type: 'model_call',
        ts: new Date().toISOString(),
        team: 't',
        agent: 'engineer',
        task: 2,
        provider: 'offline',
        model: 'offline-scripted',
        purpose: 'turn',
        inputTokens: 1,
        outputTokens: 1,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        costUsd: null,
        latencyMs: 1,
        stopReason: 'tool_use',
        text: 'Writing organize.py.\nIt sorts every file into a folder named after its type, and never overwrites.',
      },
    } as const;
    const line = describeEvent(says, view)!.text;
    // One line, within the 60 columns.
    expect(line).toBe('[engineer] says: Writing organize.py. It sorts every file…');
    expect(line.length).toBeLessThan(60);
    await runLine('/verbose on', withView);
    expect(out.at(-1)).toBe('verbose: on (whole model turns)');
    // The whole turn, its second line under the text.
    expect(describeEvent(says, view)!.text).toBe('[engineer] says: Writing organize.py.\n  It sorts every file into a folder named after its type, and never overwrites.');
    await runLine('/verbose off', withView);
    expect(view.verbose).toBe(false);
    await runLine('/verbose loud', withView);
    expect(out.at(-1)).toBe('error: usage: /verbose on|off');
  });

  it('approves a pending plan request', async () => {
    session = await quietSession();
    const { value, out } = io(session);
    await boardOf(session).registry.join('engineer', 'engineer');
    const request = await boardOf(session).requests.create({ kind: 'plan', from: 'engineer', to: 'lead', plan: 'Write organize.py first.' });
    // The teammate's message that asks for it, as the plan tool sends it: the plan is listed once, with how to decide it.
    await boardOf(session).mailbox.send('engineer', session.lead, 'Write organize.py first.', 'plan_approval_request', { requestId: request.id });
    const told = messageTold(session, 'plan');
    session.drainInbox();
    await told;
    await runLine('/inbox', value);
    expect(out.at(-1)).toBe(`Inbox:\n  plan ${request.id} from engineer: Write organize.py first.  → /approve ${request.id} or /reject ${request.id} <why>`);
    await runLine(`/approve ${request.id}`, value);
    expect(out.at(-1)).toBe(`approved ${request.id}`);
    expect(boardOf(session).mailbox.peek('engineer')[0]).toMatchObject({ type: 'plan_approval_response', requestId: request.id, approve: true });
    await runLine(`/reject ${request.id} too late`, value);
    expect(out.at(-1)).toMatch(/^error: plan request .* was already approved/);
  });
});

describe('/team with a model per role', () => {
  it("shows each running teammate's model", async () => {
    const { LeadSession } = await import('../../src/core/lead/session.js');
    const { runLine } = await import('../../src/frontend/commands.js');
    const fsMod = await import('node:fs');
    const osMod = await import('node:os');
    const pathMod = await import('node:path');
    const root = fsMod.mkdtempSync(pathMod.join(osMod.tmpdir(), 'autoteam-models-'));
    const session = new LeadSession({
      rootDir: root,
      model: { kind: 'openai', model: 'gpt-4.1-mini', baseURL: 'http://127.0.0.1:9/v1' },
      models: { reviewer: { kind: 'openai', model: 'qwen2.5-coder', baseURL: 'http://127.0.0.1:9/v1' } },
      settings: { pollMs: 100 },
    });
    const out: string[] = [];
    try {
      await session.start([
        { name: 'eng', role: 'engineer' },
        { name: 'rev', role: 'reviewer' },
      ]);
      await waitUntil(() => boardOf(session).registry.read().members.filter((m) => m.status === 'idle').length === 2, 'both teammates idle');
      await runLine('/team', { session, print: (text) => out.push(text), askLead: async () => '' });
      expect(out.at(-1)).toMatch(/eng \(engineer\): idle[^\n]* · gpt-4\.1-mini via 127\.0\.0\.1:9/);
      expect(out.at(-1)).toMatch(/rev \(reviewer\): idle[^\n]* · qwen2\.5-coder via 127\.0\.0\.1:9/);
      expect(session.modelLabel).toBe('gpt-4.1-mini via 127.0.0.1:9 · reviewer: qwen2.5-coder via 127.0.0.1:9');
    } finally {
      await session.close(2_000);
      fsMod.rmSync(root, { recursive: true, force: true });
    }
  });
});
