import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { assertBuilt, CLI, offlineEnv } from '../helpers/repl-cli.js';
import { readTasks, tempBoard } from '../helpers/repl-session.js';
import { personGit } from '../helpers/person-git.js';
import { errorReply, MessagesServer } from '../helpers/messages-server.js';
import { CliChild } from '../helpers/cli-child.js';
import { RequestStore } from '../../src/core/board/requests.js';
import fs from 'node:fs';
import path from 'node:path';
import { fileBoard } from '../../src/core/board/board.js';
import { Pipeline } from '../../src/core/stages/pipeline.js';

const REQUIREMENT = 'Write a Python script that organizes my Downloads folder by file type.';

describe('autoteam line mode (stdin is a pipe)', () => {
  it('/team as the first line lists the teammates the start announced, not "no teammates"', async () => {
    assertBuilt();
    const dir = tempBoard('autoteam-repl-team-');
    const result = await execa('node', [CLI, '--dir', dir], { cwd: dir, env: offlineEnv(), input: '/team\n', reject: false, timeout: 120_000 });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain('started analyst (analyst), engineer (engineer), reviewer (reviewer)');
    expect(result.stdout).not.toContain('no teammates');
    for (const name of ['analyst', 'engineer', 'reviewer']) expect(result.stdout).toMatch(new RegExp(`^  ${name} \\(${name}\\): (starting|idle)`, 'm'));
  });

  it("shows what the lead did before its reply: the post's line, then the lead's words", async () => {
    assertBuilt();
    const dir = tempBoard('autoteam-repl-line-');
    const result = await execa('node', [CLI, '--dir', dir, '--auto'], { cwd: dir, env: offlineEnv(), input: 'Write a word counter\n', reject: false, timeout: 120_000 });
    expect(result.exitCode, result.stderr).toBe(0);
    const tool = result.stdout.indexOf('[lead] create_task: Posted pipeline #1');
    const reply = result.stdout.indexOf('lead: Pipeline #1 is on the board: the analyst who takes it');
    expect(tool, result.stdout).toBeGreaterThanOrEqual(0);
    expect(reply, result.stdout).toBeGreaterThan(tool);
  });

  it("a task's work is shown before the next line's output: its command's line, then /tasks, then the shutdown", async () => {
    assertBuilt();
    const dir = tempBoard('autoteam-repl-order-');
    const input = 'create a task to run `sleep 1; echo done-sleeping`\n/tasks\n';
    const result = await execa('node', [CLI, '--dir', dir], { cwd: dir, env: offlineEnv(), input, reject: false, timeout: 120_000 });
    expect(result.exitCode, result.stderr).toBe(0);
    const lines = result.stdout.split('\n');
    const ran = lines.findIndex((line) => /^\[\w+\] bash: exit 0 \(\d+ ms\)$/.test(line));
    const listed = lines.findIndex((line) => line.startsWith('[x] #1: run `sleep 1; echo done-sleeping`'));
    const shutdown = lines.indexOf('shutting the team down…');
    expect(ran, result.stdout).toBeGreaterThan(0);
    expect(listed, result.stdout).toBeGreaterThan(ran);
    expect(shutdown, result.stdout).toBeGreaterThan(listed);
  });

  it("/merge all: each merge step's line, then what the queue made of it", async () => {
    assertBuilt();
    const repo = tempBoard('autoteam-repl-merge-');
    personGit(repo, 'init', '-q', '-b', 'main');
    personGit(repo, 'commit', '-q', '--allow-empty', '-m', 'Initial commit');
    const result = await execa('node', [CLI, '--dir', repo, '--auto'], { cwd: repo, env: offlineEnv(), input: 'Write a word counter\n/merge all\n', reject: false, timeout: 120_000 });
    expect(result.exitCode, result.stderr).toBe(0);
    const step = result.stdout.indexOf('merge #1: merged — fast-forward to');
    const summary = result.stdout.search(/pipeline #1: \S+ merged into main \(fast-forward/);
    expect(step, result.stdout).toBeGreaterThanOrEqual(0);
    expect(summary, result.stdout).toBeGreaterThan(step);
    expect(personGit(repo, 'status', '--porcelain')).toBe('');
  });

  it('posts a requirement, waits for the pipeline before the next line, and exits 0 with five completed stages', async () => {
    assertBuilt();
    const dir = tempBoard('autoteam-repl-line-');
    const result = await execa('node', [CLI, '--dir', dir, '--auto'], {
      cwd: dir,
      env: offlineEnv(),
      input: `/post ${REQUIREMENT}\n/tasks\n`,
      reject: false,
      timeout: 120_000,
    });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain('offline scripted model — set ANTHROPIC_API_KEY or OPENAI_API_KEY for a real model');
    expect(result.stdout).toMatch(/posted pipeline #1: task #1 \(requirements\)/);
    // The line after /post is read only once the team is done (or asks something): /tasks shows the
    // finished board (had it run at once, there would be no task #5 yet).
    expect(result.stdout).toContain('[x] #5: Review organize.py (revision 1)');
    expect(result.stdout).toMatch(/\? analyst asks \(pipeline #1\): /);
    expect(result.stdout).toMatch(/! simulated user answers analyst: /);
    expect(result.stdout).toMatch(/= Pipeline #1 approved: .* — files in \S+\/workspace\/1\n/);
    expect(result.stdout.trimEnd().endsWith('bye')).toBe(true);
    // Each teammate's leaving is told once, by the quit's report, not also as its exit comes in.
    for (const name of ['analyst', 'engineer', 'reviewer']) {
      expect(result.stdout.split('\n').filter((line) => line.startsWith(`${name}: shut down (`))).toHaveLength(1);
      expect(result.stdout).not.toContain(`[${name}] left:`);
    }
    // No escape sequences: line mode is plain text.
    expect(result.stdout).not.toContain('\u001b[');

    const tasks = readTasks(dir);
    expect(tasks.map((task) => [task.stage, task.status, task.revision])).toEqual([
      ['requirements', 'completed', 0],
      ['implementation', 'completed', 0],
      ['review', 'completed', 0],
      ['implementation', 'completed', 1],
      ['review', 'completed', 1],
    ]);
    expect(tasks.at(-1)!.artifacts.verdict).toBe('approved');
    expect(tasks.every((task) => task.status !== 'in_progress')).toBe(true);
  });

  it('runs commands line by line and quits at /quit without waiting', async () => {
    assertBuilt();
    const dir = tempBoard('autoteam-repl-line-');
    const result = await execa('node', [CLI, '--dir', dir, '--no-team'], {
      cwd: dir,
      env: offlineEnv(),
      input: '/help\n/tsks\n/team\n/inbox\n/quit\n/post never read\n',
      reject: false,
      timeout: 60_000,
    });
    // A line of the input that failed (the typo) is work the script did not get done.
    expect(result.exitCode, result.stderr).toBe(1);
    expect(result.stdout).toContain('/post <text>');
    expect(result.stdout).toContain('unknown command /tsks — did you mean /tasks?');
    expect(result.stdout).toContain('not done: 1 line of the input failed (the first: "/tsks"; its error is above)');
    expect(result.stdout).toContain('no teammates (/spawn <name> <role>)');
    expect(result.stdout).toContain('Inbox empty.');
    expect(result.stdout).not.toContain('posted pipeline');
  });

  it('skips a comment line (# …) as run --file does, and exits 0', async () => {
    assertBuilt();
    const dir = tempBoard('autoteam-repl-line-');
    const result = await execa('node', [CLI, '--dir', dir, '--no-team'], { cwd: dir, env: offlineEnv(), input: '# this script lists the board\n#no space either\n/tasks\n#\n', reject: false, timeout: 60_000 });
    expect(result.exitCode, result.stdout).toBe(0);
    expect(result.stdout).toContain('No tasks');
    expect(result.stdout).not.toMatch(/lead:|posted pipeline/);
    expect(readTasks(dir)).toEqual([]);
    // `#1: yes` and a bare `#2` are answers to a pipeline, not comments: with no question waiting, each is an error.
    const answers = await execa('node', [CLI, '--dir', dir, '--no-team'], { cwd: dir, env: offlineEnv(), input: '#1: yes\n#2\n', reject: false, timeout: 60_000 });
    expect(answers.exitCode, answers.stdout).toBe(1);
    expect(answers.stdout).toContain('error: no question is waiting for an answer');
    expect(answers.stdout).toContain('not done: 2 lines of the input failed (the first: "#1: yes"; its error is above)');
  });

  it('refuses a message to the lead over the requirement limit in one line, posting nothing', async () => {
    assertBuilt();
    const dir = tempBoard('autoteam-repl-line-');
    const huge = `Write a program that ${'does a great many things, '.repeat(5_000)}`;
    const result = await execa('node', [CLI, '--dir', dir, '--no-team'], { cwd: dir, env: offlineEnv(), input: `${huge}\n/tasks\n`, reject: false, timeout: 60_000 });
    expect(result.exitCode, result.stderr).toBe(1);
    expect(result.stdout).toContain('not done: 1 line of the input failed (the first: "Write a program that does a great many things, does a great many things, does a…"; its error is above)');
    expect(result.stdout).toMatch(/error: a message to the lead is at most 100 KB \(this one is 127 KB\): put the details in a file/);
    expect(result.stdout).toContain('No tasks');
    expect(readTasks(dir)).toEqual([]);
  });

  it("exits 1 when the lead's model refuses the requirement, which is not posted, saying so after the error", async () => {
    assertBuilt();
    const server = await MessagesServer.start(Array.from({ length: 10 }, () => errorReply(400, 'invalid_request_error', 'tools: unsupported')));
    const dir = tempBoard('autoteam-repl-line-');
    try {
      const env = { ...offlineEnv(), ANTHROPIC_API_KEY: 'test-key-line', ANTHROPIC_BASE_URL: server.url };
      const result = await execa('node', [CLI, '--dir', dir, '--auto'], { cwd: dir, env, input: `${REQUIREMENT}\n/tasks\n`, reject: false, timeout: 120_000 });
      expect(result.exitCode, result.stdout).toBe(1);
      const lines = result.stdout.split('\n');
      const error = lines.findIndex((line) => /^error: .*refused the request .*\(400 invalid_request_error: tools: unsupported\) \(a requirement goes on the board without the lead's model: \/post <requirement>\)$/.test(line));
      expect(error, result.stdout).toBeGreaterThan(-1);
      expect(lines.indexOf(`not done: 1 line of the input failed (the first: "${REQUIREMENT}"; its error is above)`)).toBeGreaterThan(error);
      expect(readTasks(dir)).toEqual([]);
      expect(result.stdout).not.toContain('test-key-line');
    } finally {
      await server.close();
    }
  });

  it('exits 0 when a pipeline fails: a verdict is no line of the input that failed', async () => {
    assertBuilt();
    const dir = tempBoard('autoteam-repl-line-');
    const result = await execa('node', [CLI, '--dir', dir, '--auto'], { cwd: dir, env: offlineEnv(), input: 'Write a web server in Rust that serves my photos.\n/tasks\n', reject: false, timeout: 120_000 });
    expect(result.exitCode, result.stdout).toBe(0);
    expect(result.stdout).toMatch(/Pipeline #1 failed at /);
    expect(result.stdout).not.toContain('not done:');
  });

  it('takes the lines after a requirement as the answers to the analyst (no --auto)', async () => {
    assertBuilt();
    const dir = tempBoard('autoteam-repl-line-');
    const result = await execa('node', [CLI, '--dir', dir], {
      cwd: dir,
      env: offlineEnv(),
      input: 'Write a Python script that counts the words in a text file.\nIt reads the file named by its first argument.\n',
      reject: false,
      timeout: 120_000,
    });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain('! person answers analyst: It reads the file named by its first argument.');
    expect(result.stdout).toContain('= Pipeline #1 approved');
    const tasks = readTasks(dir);
    // One pipeline: the answer did not become a second requirement.
    expect(new Set(tasks.map((task) => task.pipeline))).toEqual(new Set([1]));
    expect(tasks[0]!.artifacts.qa).toEqual([
      { question: expect.any(String), answer: 'It reads the file named by its first argument.', by: 'person' },
    ]);
  });

  it("exits 1 when input ends with the analyst's question unanswered, saying so, and leaves the pipeline open for the next session", async () => {
    assertBuilt();
    const dir = tempBoard('autoteam-repl-line-');
    const result = await execa('node', [CLI, '--dir', dir], { cwd: dir, env: offlineEnv(), input: 'Write a Python script that counts the words in a text file.\n', reject: false, timeout: 120_000 });
    expect(result.exitCode, result.stdout).toBe(1);
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(/^not waiting: analyst asks ".+" and input has ended \(answer in the input, or use --auto\)$/m);
    expect(result.stdout.trim().split('\n').at(-1)).toBe('bye');
    const [requirements] = readTasks(dir);
    expect(requirements!.status).toBe('pending');
    expect(requirements!.history.some((entry) => entry.event === 'asked')).toBe(true);
  });

  it('a general task with plan approval: /approve with no id approves the one plan waiting; with none in the input, exit 1 saying so', async () => {
    assertBuilt();
    const post = 'create a task to run `ls -la`, with plan approval\n';
    const approved = tempBoard('autoteam-repl-line-');
    const run = await execa('node', [CLI, '--dir', approved], { cwd: approved, env: offlineEnv(), input: `${post}/approve\n`, reject: false, timeout: 120_000 });
    expect(run.exitCode, run.stdout).toBe(0);
    // The line after the post waits until the plan is asked for, then decides it.
    const lines = run.stdout.split('\n');
    const asked = lines.findIndex((line) => /^plan (plan-\w+) from \w+: 1\. Run `ls -la` in the workspace\.$/.test(line));
    const id = /^plan (plan-\w+)/.exec(lines[asked] ?? '')?.[1];
    expect(lines.indexOf(`approved ${id}`), run.stdout).toBeGreaterThan(asked);
    expect(readTasks(approved).map((task) => `${task.status} ${task.artifacts.requirePlan}`)).toEqual(['completed true']);

    // Undecided, with other work beside it: that work is still waited for; the plan is said at the end.
    const undecided = tempBoard('autoteam-repl-line-');
    const input = `${post}create a task to run \`sleep 2; echo slept\`\n`;
    const left = await execa('node', [CLI, '--dir', undecided], { cwd: undecided, env: offlineEnv(), input, reject: false, timeout: 120_000 });
    expect(left.exitCode, left.stdout).toBe(1);
    expect(left.stdout).toMatch(/^not waiting: \w+'s plan plan-\w+ waits for a decision and input has ended \(\/approve or \/reject in the input\)$/m);
    expect(left.stdout).not.toMatch(/gave up waiting/);
    const [planned, other] = readTasks(undecided);
    expect(other).toMatchObject({ status: 'completed', result: expect.stringContaining('slept') });
    // Its teammate stopped waiting at the shutdown: the task went back, its plan withdrawn.
    expect(planned).toMatchObject({ status: 'pending', owner: null });
    expect(new RequestStore(undecided).list({ kind: 'plan' }).map((request) => request.status)).toEqual(['rejected']);
  });

  it('a pipeline whose next stage no teammate here takes is left open at once with exit 1, saying what it waits for', async () => {
    assertBuilt();
    const dir = tempBoard('autoteam-repl-line-');
    // The engineer shut down for good: the implementation task the analyst hands over waits for one.
    // The wait does not run out its five minutes (the test's ceiling is far below), nor end quiet with 0.
    const input = '/shutdown engineer\n/post Write a Python script that counts the words in a text file.\n';
    const result = await execa('node', [CLI, '--auto', '--dir', dir], { cwd: dir, env: offlineEnv(), input, reject: false, timeout: 120_000 });
    expect(result.exitCode, result.stdout).toBe(1);
    expect(result.stdout).not.toMatch(/gave up waiting/);
    const lines = result.stdout.split('\n');
    const open = lines.findIndex((line) => line === 'left open: pipeline #1 (task #2 waits for a teammate of role engineer); nobody in this session takes it on: /spawn <name> engineer in a lead here, or autoteam worker --role engineer, goes on with it');
    expect(open, result.stdout).toBeGreaterThan(lines.findIndex((line) => line.startsWith('[analyst] → #2 implementation')));
    expect(open).toBeLessThan(lines.indexOf('shutting the team down…'));
    expect(readTasks(dir).map((task) => `#${task.id} ${task.stage} ${task.status}`)).toEqual(['#1 requirements completed', '#2 implementation pending']);
  });

  it('a pipeline whose next stage may be in a task file that does not read is left open at once, the file named and left as it is', async () => {
    assertBuilt();
    const dir = tempBoard('autoteam-repl-line-');
    const board = fileBoard(dir);
    const pipeline = new Pipeline(board.tasks, board.mailbox, { events: board.sink });
    const first = await pipeline.post('Write a Python script that counts the words in a text file.');
    const claim = await board.tasks.claim(first.id, 'analyst');
    if (!claim.ok) throw new Error(claim.reason);
    await board.tasks.update(first.id, { artifacts: { requirements: { goal: 'count words' } } });
    await pipeline.advance(claim.task, { owner: 'analyst', token: claim.task.claims }, { tool: 'complete_requirements_analysis', artifacts: { summary: 's' }, result: 's' });
    await board.close();
    // The implementation task's file, cut short by hand.
    const broken = path.join(dir, '.tasks', 'task_2.json');
    fs.writeFileSync(broken, '{"id": 2, "subject": "Impl');
    const result = await execa('node', [CLI, '--auto', '--dir', dir], { cwd: dir, env: offlineEnv(), input: '', reject: false, timeout: 120_000 });
    expect(result.exitCode, result.stdout).toBe(1);
    expect(result.stdout).toContain(`left open: pipeline #1, whose next stage may be in a task file that does not read (${broken}: not valid JSON`);
    expect(result.stdout).toMatch(/: mend or remove the file, and a lead here goes on with it$/m);
    expect(fs.readdirSync(path.join(dir, '.tasks')).filter((name) => name.startsWith('task_')).sort()).toEqual(['task_1.json', 'task_2.json']);
    expect(fs.readFileSync(broken, 'utf8')).toBe('{"id": 2, "subject": "Impl');
  });

  it('after a lead killed with a question out, the next one reads its first line as the answer to the question asked again, not as a requirement', async () => {
    const dir = tempBoard('autoteam-repl-crash-');
    const first = CliChild.start(['--dir', dir], { cwd: dir, stdin: 'pipe' });
    first.write(`${REQUIREMENT}\n`);
    await first.waitForLine((line) => line.startsWith('? analyst asks'), "the analyst's first question");
    process.kill(first.pid, 'SIGKILL');
    await first.exited;

    const second = await execa('node', [CLI, '--dir', dir], { cwd: dir, env: offlineEnv(), input: 'Images (jpg, png) and Other\nskip it and warn\n', reject: false, timeout: 120_000 });
    expect(second.stdout).toMatch(/^! person answers analyst: Images \(jpg, png\) and Other$/m);
    // Nothing of the input became a pipeline of its own: every task is pipeline #1's.
    expect(readTasks(dir).map((task) => task.pipeline), second.stdout).toEqual(readTasks(dir).map(() => 1));
  });
});
