/** The activity lines a released task gets: a retry says its attempt and when; a release that is no retry says neither. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type ActivityView, activityView, describeSessionEvent, describeTeamEvent, errorRepeats } from '../../src/frontend/activity.js';
import { type TeamEvent, TeamEventSchema } from '../../src/core/events/schema.js';
import { eventLine } from '../../src/cli/events-command.js';

const view = { verbose: false, width: 200 };
const released = (extra: Record<string, unknown>) =>
  TeamEventSchema.parse({ type: 'task_released', ts: '2026-12-02T10:00:00.000Z', team: 'default', pipeline: 1, task: 1, agent: 'analyst', kind: 'error', token: 1, ...extra });

describe('activity lines of a released task', () => {
  it('a retry after an error: its attempt and when the task may be claimed again', () => {
    const line = describeTeamEvent(released({ detail: 'model error: overloaded', attempt: 2, notBefore: '2026-12-02T10:00:05.000Z' }), view);
    expect(line?.text).toBe('[analyst] released #1 after an error (model error: overloaded); attempt 2, claimable again in 5 s');
  });

  it('a release told after its back-off ran out (written once an outage ended): claimable now', () => {
    const line = describeTeamEvent(released({ detail: 'the board could not be reached', attempt: 1, notBefore: '2026-12-02T09:59:50.000Z' }), view);
    expect(line?.text).toBe('[analyst] released #1 after an error (the board could not be reached); attempt 1, claimable again now');
  });

  it('a retry an endpoint asked to hold off for an hour: the wait in minutes', () => {
    const line = describeTeamEvent(released({ detail: 'model error: 429, and asks for no request for 60 min (retry-after)', attempt: 2, notBefore: '2026-12-02T11:00:00.000Z' }), view);
    expect(line?.text).toBe('[analyst] released #1 after an error (model error: 429, and asks for no request for 60 min (retry-after)); attempt 2, claimable again in 60 min');
  });

  it('a release after an error no retry fixes (the teammate stops): no attempt, no "?"', () => {
    const line = describeTeamEvent(released({ detail: 'model error: Cannot reach the model API at http://127.0.0.1:9 (ECONNREFUSED)' }), view);
    expect(line?.text).toBe('[analyst] released #1 after an error (model error: Cannot reach the model API at http://127.0.0.1:9 (ECONNREFUSED))');
  });
});

describe('an error said again and again', () => {
  it('is shown once a minute, with how often it came meanwhile; other lines and other errors pass', () => {
    let now = 0;
    const errorLine = errorRepeats(60_000, () => now);
    const bad = { text: 'error BOARD_FILE_INVALID: /b/.team/inbox/lead.jsonl: is a folder', tone: 'error' as const };
    expect(errorLine(bad)).toEqual(bad);
    const held = [500, 1_000, 30_000].map((at) => ((now = at), errorLine(bad)));
    expect(held).toEqual([null, null, null]);
    now = 30_500;
    expect(errorLine({ text: 'error X: another', tone: 'error' })?.text).toBe('error X: another');
    now = 60_000;
    expect(errorLine(bad)?.text).toBe(`${bad.text} (and 3 more times since it was last shown)`);
    now = 60_001;
    expect(errorLine(bad)).toBeNull();
    now = 200_000;
    expect(errorLine(bad)?.text).toBe(`${bad.text} (and 1 more time since it was last shown)`);
  });

  it("a message to the lead is a line, save a general task's failure, which its failed line from the log says", () => {
    const session = { task: () => undefined, snapshot: () => ({ team: { members: [] }, pipelines: [] }) } as never;
    const message = (extra: Record<string, unknown>) => ({ type: 'message', message: { id: 'm', type: 'message', from: 'engineer', to: 'lead', content: 'Task #4 failed: no', at: '2026-12-06T10:00:00.000Z', task: 4, ...extra } }) as never;
    expect(describeSessionEvent(session, message({}), activityView())?.text).toBe('✉ engineer: Task #4 failed: no');
    expect(describeSessionEvent(session, message({ failed: true }), activityView())).toBeNull();
  });

  it("a session's error and a teammate's go through the view; other lines never do", () => {
    const session = { task: () => undefined, snapshot: () => ({ team: { members: [] }, pipelines: [] }) } as never;
    const view = activityView();
    const error = { type: 'error', code: 'EISDIR', message: 'x' } as const;
    expect(describeSessionEvent(session, error, view)?.text).toBe('error EISDIR: x');
    expect(describeSessionEvent(session, error, view)).toBeNull();
    const teammate = { type: 'teammate', event: { type: 'error', name: 'analyst', error: { code: 'E', message: 'y' } } } as const;
    expect(describeSessionEvent(session, teammate as never, view)?.text).toBe('[analyst] error E: y');
    expect(describeSessionEvent(session, teammate as never, view)).toBeNull();
    const notice = { type: 'notice', text: 'same' } as const;
    expect([describeSessionEvent(session, notice, view)?.text, describeSessionEvent(session, notice, view)?.text]).toEqual(['same', 'same']);
  });
});

describe('the line that ends a pipeline', () => {
  const status = (extra: Record<string, unknown>) =>
    TeamEventSchema.parse({ type: 'pipeline_status', ts: '2026-12-02T10:00:00.000Z', team: 'default', pipeline: 1, task: 5, agent: 'reviewer', ...extra });
  const workspaces = (pipeline: number) => (pipeline === 1 ? '/home/me/board/workspace/1' : undefined);

  it('approved: says where the approved files are', () => {
    const line = describeTeamEvent(status({ status: 'approved', reason: 'Pipeline #1 approved: lgtm' }), view, () => undefined, workspaces);
    expect(line?.text).toBe('= Pipeline #1 approved: lgtm — files in /home/me/board/workspace/1');
  });

  it("a session's line names the approved files' folder only where it is on this machine (on a shared board, another folder may have worked it)", () => {
    const here = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-files-here-'));
    try {
      const sessionWith = (workspace: string) => ({ task: () => undefined, snapshot: () => ({ team: { members: [] }, pipelines: [{ id: 1, workspace }] }) }) as never;
      const approved = { type: 'team', event: status({ status: 'approved', reason: 'Pipeline #1 approved: lgtm' }) } as never;
      expect(describeSessionEvent(sessionWith(here), approved, view)?.text).toBe(`= Pipeline #1 approved: lgtm — files in ${here}`);
      expect(describeSessionEvent(sessionWith(path.join(here, 'elsewhere')), approved, view)?.text).toBe('= Pipeline #1 approved: lgtm');
    } finally {
      fs.rmSync(here, { recursive: true, force: true });
    }
  });

  it('failed, or approved where the workspace is not known: the reason alone', () => {
    expect(describeTeamEvent(status({ status: 'failed', reason: 'Pipeline #1 failed: stuck' }), view, () => undefined, workspaces)?.text).toBe('= Pipeline #1 failed: stuck');
    expect(describeTeamEvent(status({ status: 'approved', reason: 'Pipeline #1 approved: lgtm' }), view)?.text).toBe('= Pipeline #1 approved: lgtm');
  });

  it('cancelled: names the pipeline before who cancelled it and why', () => {
    expect(describeTeamEvent(status({ status: 'cancelled', reason: 'cancelled by lead: autoteam run timed out after 3.0 s' }), view)?.text).toBe(
      '= Pipeline #1 cancelled by lead: autoteam run timed out after 3.0 s',
    );
    expect(describeTeamEvent(status({ status: 'cancelled', reason: 'blocked by a hook' }), view)?.text).toBe('= Pipeline #1 cancelled: blocked by a hook');
    expect(describeTeamEvent(status({ status: 'cancelled' }), view)?.text).toBe('= Pipeline #1 cancelled');
  });
});

describe('a question the last session left pending', () => {
  it('is shown with its pipeline, and as left over from the last session', () => {
    const session = { task: () => null, snapshot: () => ({ pipelines: [] }) } as unknown as Parameters<typeof describeSessionEvent>[0];
    const question = { questionId: 'q1', from: 'analyst', question: 'What input does it read?', task: 1, pipeline: 3, at: '2026-12-02T10:00:00.000Z' };
    expect(describeSessionEvent(session, { type: 'question', question, resumed: true }, view)?.text).toBe('? analyst asks (pipeline #3), still waiting from the last session: What input does it read?');
    // A question asked in this session is shown from the log (question_asked), not here.
    expect(describeSessionEvent(session, { type: 'question', question }, view)).toBeNull();
  });
});

describe('lines of several pipelines', () => {
  const at = (extra: Record<string, unknown>) => TeamEventSchema.parse({ ts: '2026-12-02T10:00:00.000Z', team: 'default', ...extra });
  const posted = (pipeline: number) => at({ type: 'task_posted', pipeline, task: pipeline, agent: 'lead', by: 'lead', stage: 'requirements', revision: 0, subject: `Analyse: ${pipeline}` });
  const tool = (pipeline: number, agent: string) => at({ type: 'tool_call', pipeline, task: 10 + pipeline, agent, tool: 'run_linter', args: '{}', outcome: 'ok', durationMs: 80, summary: 'app.py: no problems' });
  const says = (pipeline: number, agent: string) => at({ type: 'model_call', pipeline, task: 10 + pipeline, agent, role: agent, purpose: 'turn', provider: 'anthropic', model: 'm', latencyMs: 5, inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: null, stopReason: 'end_turn', text: 'Every criterion is met.' });
  const status = (pipeline: number, value: string) => at({ type: 'pipeline_status', pipeline, task: 10 + pipeline, agent: 'reviewer', status: value, ...(value === 'active' ? {} : { reason: `Pipeline #${pipeline} ${value}: done` }) });
  const lines = (view: ActivityView, events: TeamEvent[]) => events.map((event) => describeTeamEvent(event, view)?.text ?? null);

  it('each names its pipeline once a second has been seen, to the end, so one pipeline reads the same throughout', () => {
    const shown = lines(activityView(() => 200), [
      posted(1),
      tool(1, 'reviewer'),
      posted(2),
      tool(1, 'reviewer'),
      says(2, 'engineer'),
      at({ type: 'question_answered', pipeline: 2, task: 2, agent: 'lead', questionId: 'q1', answer: 'Python 3', by: 'simulated user', asker: 'analyst' }),
      status(1, 'approved'),
      // Pipeline #2 is alone now: its lines still name it.
      tool(2, 'reviewer'),
      status(2, 'approved'),
      // A merge step names its pipeline anyway; a line after it says whose it is.
      at({ type: 'merge_step', pipeline: 2, task: 12, agent: 'lead', step: 'queued', branch: 'autoteam/2-x', into: 'main', detail: 'approved 1 s ago; 1 of 1 in the queue' }),
      tool(1, 'engineer'),
      // An event with no pipeline (a teammate's note) names none.
      at({ type: 'note', agent: 'engineer', text: 'idle' }),
    ]);
    expect(shown).toEqual([
      null,
      '[reviewer] run_linter: app.py: no problems',
      null,
      '[p1 reviewer] run_linter: app.py: no problems',
      '[p2 engineer] says: Every criterion is met.',
      '! simulated user answers analyst (pipeline #2): Python 3',
      '= Pipeline #1 approved: done',
      '[p2 reviewer] run_linter: app.py: no problems',
      '= Pipeline #2 approved: done',
      'merge #2: queued — approved 1 s ago; 1 of 1 in the queue',
      '[p1 engineer] run_linter: app.py: no problems',
      '[engineer] idle',
    ]);
  });

  it("a run of several requirements names each line's pipeline from the first: the first answer too, before a second pipeline is seen", () => {
    const answered = at({ type: 'question_answered', pipeline: 1, task: 1, agent: 'lead', questionId: 'q1', answer: 'Python 3', by: 'simulated user', asker: 'analyst' });
    expect(lines(activityView(() => 200, { tagPipelines: 'always' }), [answered, tool(1, 'reviewer')])).toEqual(['! simulated user answers analyst (pipeline #1): Python 3', '[p1 reviewer] run_linter: app.py: no problems']);
    expect(lines(activityView(() => 200), [answered])).toEqual(['! simulated user answers analyst: Python 3']);
  });

  it('a front end whose lines name the pipeline anyway (autoteam events) tags none', () => {
    const shown = lines(activityView(() => 200, { tagPipelines: false }), [posted(1), posted(2), tool(1, 'reviewer')]);
    expect(shown.at(-1)).toBe('[reviewer] run_linter: app.py: no problems');
    expect(eventLine(tool(1, 'reviewer'))).toMatch(/ p1 \[reviewer\] run_linter/);
  });
});

describe('a tool call shown by its own event', () => {
  const call = (outcome: 'ok' | 'invalid_arguments' | 'claim_lost', summary: string) =>
    TeamEventSchema.parse({ type: 'tool_call', ts: '2026-12-02T10:00:00.000Z', team: 't', pipeline: 1, task: 1, agent: 'analyst', tool: 'ask_clarifying_question', args: '{"nonsense":1}', outcome, durationMs: 0, summary });

  it('a question asked is its question line, not a tool line; one the runtime refused is a tool line with its reason', () => {
    expect(describeTeamEvent(call('ok', 'asked'), view)).toBeNull();
    expect(describeTeamEvent(call('invalid_arguments', 'Invalid arguments for ask_clarifying_question: question: missing (a string is expected). Expected: {question: string}'), view)?.text).toBe(
      '[analyst] ask_clarifying_question ✗: Invalid arguments for ask_clarifying_question: question: missing (a string is expected). Expected: {question: string}',
    );
  });

  it("a general task's complete_task is its completed line, not a tool line after it; one refused is a tool line", () => {
    const complete = (outcome: 'ok' | 'invalid_arguments', summary: string) => TeamEventSchema.parse({ ...call(outcome, summary), pipeline: null, tool: 'complete_task' });
    expect(describeTeamEvent(complete('ok', 'Task #1 completed.'), view)).toBeNull();
    expect(describeTeamEvent(complete('invalid_arguments', 'Invalid arguments for complete_task: result: missing'), view)?.text).toBe('[analyst] complete_task ✗: Invalid arguments for complete_task: result: missing');
  });

  it('a call not run because the task was cancelled or taken over is no line: the cancel or the takeover is said once', () => {
    expect(describeTeamEvent(call('claim_lost', 'Not run: task #1 is no longer yours (cancelled, owner analyst, claim 1); nothing was written'), view)).toBeNull();
  });
});

describe('a teammate a model error stopped', () => {
  const session = { task: () => undefined, snapshot: () => ({ team: { members: [{ name: 'analyst', role: 'analyst' }] }, pipelines: [] }) } as never;
  const exit = (why: 'model_error' | 'idle_timeout', reason: string) => ({ type: 'teammate_exit' as const, exit: { name: 'analyst', kind: 'left' as const, why, code: 0, reason, released: [] } });

  it('says its tasks wait and how to start it again once the key is mended; another leaving is one line', () => {
    expect(describeSessionEvent(session, exit('model_error', 'model error: ANTHROPIC_API_KEY was rejected'), view)?.text).toBe(
      "[analyst] left: model error: ANTHROPIC_API_KEY was rejected — its tasks wait: /spawn analyst analyst starts it again once the model answers (/model analyst <model> first for another model; a new key needs autoteam started again)",
    );
    expect(describeSessionEvent(session, exit('idle_timeout', 'idle for 60 s'), view)?.text).toBe('[analyst] left: idle for 60 s');
  });
});

describe('the line of a hook that says a lot', () => {
  const decision = (reason: string) =>
    TeamEventSchema.parse({ type: 'hook_decision', ts: '2026-12-02T10:00:00.000Z', team: 'default', pipeline: 1, task: 2, agent: 'engineer', hook: 'PostToolUse', command: 'sh lint.sh', decision: 'warn', exitCode: 1, reason, durationMs: 12 });

  it('shows a short reason whole, and of a long one the start, saying where the rest is', () => {
    expect(describeTeamEvent(decision('style check unavailable'), view)?.text).toBe('hook PostToolUse (sh lint.sh): warn — style check unavailable');
    const text = describeTeamEvent(decision(`FIRST ${'x'.repeat(40_000)}`), view)!.text;
    expect(text.startsWith('hook PostToolUse (sh lint.sh): warn — FIRST xxx')).toBe(true);
    expect(text).toMatch(/\n… cut: 38\.\d KB more; autoteam events --json has more$/);
    expect(text.length).toBeLessThan(800);
  });
});
