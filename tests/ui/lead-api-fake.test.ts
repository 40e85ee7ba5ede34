/**
 * The front ends use the lead session only through LeadApi: a plain object that implements it, and
 * nothing else, drives the line-mode REPL and the command layer. Each test says which commands the
 * front end called and what it printed.
 */
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { TaskSchema } from '../../src/core/board/schemas.js';
import type { LeadApi, LeadSnapshot } from '../../src/core/lead/lead-api.js';
import type { LeadEvent } from '../../src/core/lead/session-types.js';
import { runLineRepl } from '../../src/cli/line-repl.js';
import { type CommandIO, runLine } from '../../src/frontend/commands.js';

const NOW = '2026-01-01T00:00:00.000Z';
const EMPTY_SPEND = { calls: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cost: 0 };

const requirementsTask = TaskSchema.parse({ id: 7, subject: 'Requirements: build a thing', status: 'pending', stage: 'requirements', pipeline: 3, createdAt: NOW, updatedAt: NOW });

function snapshot(): LeadSnapshot {
  return {
    board: { location: '/boards/demo', where: '/boards/demo', rootDir: '/boards/demo', repository: null, problems: ['.tasks/task_9.json: not JSON'] },
    tasks: [requirementsTask],
    pipelines: [{ id: 3, status: 'active', usage: { calls: 0, inputTokens: 0, outputTokens: 0 }, cost: null, workspace: '/boards/demo/workspace/3' }],
    team: {
      name: 'demo',
      lead: 'lead',
      members: [
        { name: 'analyst', role: 'analyst', status: 'working', task: 7, since: NOW, pid: 1, running: true, model: 'claude-test', spend: { ...EMPTY_SPEND, calls: 2, inputTokens: 1_500, outputTokens: 500, cost: 0.01 } },
      ],
    },
    questions: [],
    plans: [{ id: 'plan-1', kind: 'plan', from: 'engineer', to: 'lead', status: 'pending', plan: 'Write organize.py first.', createdAt: NOW } as never],
    spend: { total: { ...EMPTY_SPEND, calls: 2, inputTokens: 1_500, outputTokens: 500, cost: 0.01 }, members: {} },
    models: { label: 'claude-test', ids: 'claude-test', offline: false, roles: [{ role: 'analyst', model: 'claude-test' }], others: 'claude-test' },
    autoAnswer: false,
  };
}

/** A LeadApi of plain functions: each call recorded as `name args…`, each answer a fixed one. */
function fakeLead() {
  const calls: string[] = [];
  const listeners = new Set<(event: LeadEvent) => void>();
  const record = (name: string, ...args: unknown[]) => calls.push([name, ...args.filter((arg) => arg !== undefined).map((arg) => JSON.stringify(arg))].join(' '));
  let auto = false;
  const lead: LeadApi = {
    subscribe(listener) {
      record('subscribe');
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    snapshot: () => snapshot(),
    task: (id) => (id === requirementsTask.id ? requirementsTask : null),
    stateOf: (pipeline) => ({ id: pipeline, status: 'active', tasks: [requirementsTask], revisions: 0, usage: { calls: 0, inputTokens: 0, outputTokens: 0 } }) as never,
    pendingQuestions: () => [],
    events: async () => [],
    leader: () => ({ state: 'here', pid: process.pid, host: 'test', since: NOW }),
    isRunning: (name) => name === 'analyst',
    modelOf: () => 'claude-test',
    leadToolNames: () => ['create_task', 'list_tasks'],
    busyReason: () => null,
    fatalModelError: () => null,
    rejectedCounts: async () => ({}),
    workSummary: async () => ({ roles: [], inputTokens: 0, outputTokens: 0, cacheReadTokens: 0 }) as never,
    waitForPipeline: async (id) => lead.stateOf(id),
    lead: 'lead',
    where: '/boards/demo',
    modelLabel: 'claude-test',
    modelIds: 'claude-test',
    offline: false,
    get autoAnswer() {
      return auto;
    },
    async start(team) {
      record('start', team?.map((member) => member.name));
    },
    async close(graceMs) {
      record('close', graceMs);
      return { exits: [{ name: 'analyst', kind: 'left', reason: 'shutdown approved', why: 'shutdown', released: [] } as never], released: [] };
    },
    async post(requirement) {
      record('post', requirement);
      return requirementsTask;
    },
    async ask(text) {
      record('ask', text);
      // What the lead agent did on the way reaches the front end as events, before its reply.
      for (const listener of listeners) listener({ type: 'notice', text: 'the lead looked at the board' });
      return 'Posted it.';
    },
    async answer(text) {
      record('answer', text);
      throw new Error('no question is pending');
    },
    async cancel(pipeline) {
      record('cancel', pipeline);
      return [7];
    },
    async retry(pipeline) {
      record('retry', pipeline);
      return { ...requirementsTask, id: 8 };
    },
    async diff(pipeline) {
      record('diff', pipeline);
      return `pipeline #${pipeline} · autoteam/3-thing · (no changes)`;
    },
    async merge(pipeline) {
      record('merge', pipeline);
      return `pipeline #${pipeline}: merged`;
    },
    async mergeQueue(onLine) {
      record('mergeQueue');
      const lines = ['pipeline #3: merged into main (queue)'];
      for (const line of lines) onLine?.(line);
      return lines;
    },
    async discard(pipeline) {
      record('discard', pipeline);
      return `pipeline #${pipeline}: discarded`;
    },
    async message(teammate, text) {
      record('message', teammate, text);
      return { id: 'm1', type: 'message', from: 'lead', to: teammate, content: text, at: NOW } as never;
    },
    setModel(role, model) {
      record('setModel', role, typeof model === 'string' ? model : model.kind);
    },
    spawn(name, role) {
      record('spawn', name, role);
    },
    async requestShutdown(name) {
      record('requestShutdown', name);
      return null;
    },
    async requestShutdownElsewhere(name) {
      record('requestShutdownElsewhere', name);
      return null;
    },
    async decidePlan(requestId, approve, feedback) {
      record('decidePlan', requestId, approve, feedback);
    },
    setAutoAnswer(on) {
      record('setAutoAnswer', on);
      auto = on;
    },
    takeUnread: () => [{ id: 'm2', type: 'message', from: 'analyst', to: 'lead', content: 'hello lead', at: NOW }] as never,
    takeRejectedLines: () => null,
    catchUp: async () => undefined,
  };
  return { lead, calls, listeners };
}

describe('the command layer over a fake LeadApi', () => {
  function io(lead: LeadApi) {
    const out: string[] = [];
    const value: CommandIO = { session: lead, print: (text) => out.push(text), askLead: (text) => lead.ask(text) };
    return { value, out };
  }

  it('turns each command into one call of the interface and prints what it returns', async () => {
    const { lead, calls } = fakeLead();
    const { value, out } = io(lead);
    for (const line of ['/post build a thing', '/cancel 3', '/retry #3', '/diff 3', '/merge 3', '/merge all', '/discard 3', '/msg analyst keep it short', '/approve plan-1', '/approve', '/reject plan-1 too big', '/auto on', '/model analyst offline', '/spawn tester tester']) {
      await runLine(line, value);
    }
    expect(calls).toEqual([
      'post "build a thing"',
      'cancel 3',
      'retry 3',
      'diff 3',
      'merge 3',
      'mergeQueue',
      'discard 3',
      'message "analyst" "keep it short"',
      'decidePlan "plan-1" true',
      // No id: the one plan waiting.
      'decidePlan "plan-1" true',
      'decidePlan "plan-1" false "too big"',
      'setAutoAnswer true',
      'setModel "analyst" "offline"',
      'spawn "tester" "tester"',
    ]);
    expect(out).toEqual([
      'posted pipeline #3: task #7 (requirements) — Requirements: build a thing',
      'pipeline #3 cancelled: #7',
      'pipeline #3 retried: task #8 (requirements) — Requirements: build a thing',
      'pipeline #3 · autoteam/3-thing · (no changes)',
      'pipeline #3: merged',
      'pipeline #3: merged into main (queue)',
      'pipeline #3: discarded',
      'sent to analyst',
      'approved plan-1',
      'approved plan-1',
      'rejected plan-1',
      'auto answers: on',
      'analyst: next tasks on claude-test',
      'spawned tester (tester)',
    ]);
  });

  it('/post in repository mode names the branch, as autoteam post does; /merge all with more after it says what it takes', async () => {
    const { lead } = fakeLead();
    const git = { repo: '/repo', branch: 'autoteam/3-thing', base: 'a'.repeat(40), worktree: '/repo/.autoteam/worktrees/3' };
    lead.post = async () => TaskSchema.parse({ ...requirementsTask, artifacts: { git } });
    const { value, out } = io(lead);
    await runLine('/post build a thing', value);
    expect(out).toEqual(['posted pipeline #3: task #7 (requirements) — Requirements: build a thing · branch autoteam/3-thing']);
    await runLine('/merge all now', value);
    expect(out.at(-1)).toBe("error: /merge takes a pipeline id or all, and nothing after it: got 'all now'");
  });

  it('/merge all prints each line as the queue says it: a wait for another merger before the wait ends', async () => {
    const { lead } = fakeLead();
    const { value, out } = io(lead);
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    let waitingSaid = () => {};
    const said = new Promise<void>((resolve) => (waitingSaid = resolve));
    lead.mergeQueue = async (onLine) => {
      onLine?.('waiting: another merger is draining the merge queue of this board');
      waitingSaid();
      await released;
      onLine?.('pipeline #3: merged into main (queue)');
      return ['waiting: another merger is draining the merge queue of this board', 'pipeline #3: merged into main (queue)'];
    };
    const running = runLine('/merge all', value);
    await said;
    // Printed once the log has caught up (a turn of the microtask queue), while the drain still waits.
    await new Promise((resolve) => setImmediate(resolve));
    expect(out).toEqual(['waiting: another merger is draining the merge queue of this board']);
    release();
    await running;
    expect(out).toEqual(['waiting: another merger is draining the merge queue of this board', 'pipeline #3: merged into main (queue)']);
    // `--queue`, as the command line spells it, is `all`.
    await runLine('/merge --queue', value);
    expect(out.slice(2)).toEqual(['waiting: another merger is draining the merge queue of this board', 'pipeline #3: merged into main (queue)']);
    // In capitals, the same word.
    await runLine('/merge ALL', value);
    expect(out.slice(4)).toEqual(['waiting: another merger is draining the merge queue of this board', 'pipeline #3: merged into main (queue)']);
  });

  it('shows the board, the team, the inbox and a task from the snapshot and the queries', async () => {
    const { lead, calls } = fakeLead();
    const { value, out } = io(lead);
    await runLine('/tasks', value);
    await runLine('/team', value);
    await runLine('/inbox', value);
    await runLine('/show 7', value);
    await runLine('/show 99', value);
    await runLine('/help', value);
    await runLine('/show 9', value);
    await runLine('/show 3', value);
    expect(calls).toEqual([]);
    expect(out[0]).toBe(['[ ] #7: Requirements: build a thing (requirements)', 'pipeline #3 active · 0 model calls · 0 tokens', 'skipped .tasks/task_9.json: not JSON'].join('\n'));
    expect(out[1]).toBe(['team demo — lead: lead · spent 2.0k tok · $0.010', '  analyst (analyst): working #7 [2.0k tok · $0.010] · claude-test'].join('\n'));
    expect(out[2]).toBe(['Inbox:', '  analyst: hello lead', '  plan plan-1 from engineer: Write organize.py first.  → /approve plan-1 or /reject plan-1 <why>'].join('\n'));
    expect(JSON.parse(out[3]!)).toMatchObject({ id: 7, stage: 'requirements' });
    expect(out[4]).toBe('error: task #99 does not exist (the last task is #7)');
    expect(out[5]).toMatch(/the lead's tools: create_task, list_tasks$/m);
    expect(out[6]).toBe('error: task #9 cannot be read: .tasks/task_9.json: not JSON');
    expect(out[7]).toBe('error: task #3 does not exist');
  });
});

describe('line mode over a fake LeadApi', () => {
  it('starts, sends free text to the lead and shows its events, answers nothing unasked, and quits through close', async () => {
    const { lead, calls, listeners } = fakeLead();
    const output = new PassThrough();
    let printed = '';
    output.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    const status = await runLineRepl(lead, { input: Readable.from(['please build a thing\n', '/post a second thing\n']), output, team: [{ name: 'analyst', role: 'analyst' }], graceMs: 1_000 });
    // Quiet (busyReason) with engineer's plan waiting for a decision nobody will give: the end says so.
    expect(status).toBe(1);
    expect(calls).toEqual(['subscribe', 'start ["analyst"]', 'ask "please build a thing"', 'post "a second thing"', 'close 1000']);
    expect(printed.split('\n')).toEqual([
      'autoteam — claude-test',
      'board /boards/demo · team demo · lead lead',
      'started analyst (analyst)',
      'Type /help for commands, or a requirement for the lead.',
      'the lead looked at the board',
      'lead: Posted it.',
      'posted pipeline #3: task #7 (requirements) — Requirements: build a thing',
      "not waiting: engineer's plan plan-1 waits for a decision and input has ended (/approve or /reject in the input)",
      'shutting the team down…',
      'analyst: shut down (shutdown approved)',
      'bye',
      '',
    ]);
    // It unsubscribed before 'bye': nothing is printed after it.
    expect(listeners.size).toBe(0);
  });
});
