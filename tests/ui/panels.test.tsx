import { Box } from 'ink';
import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import type { Member, Task } from '../../src/core/board/schemas.js';
import { BoardPanel } from '../../src/ui/board-panel.js';
import { QuestionBox } from '../../src/ui/question-box.js';
import { boardView } from '../../src/ui/stores.js';
import { TeamPanel } from '../../src/ui/team-panel.js';
import { Header } from '../../src/ui/header.js';
import { frameLayout } from '../../src/ui/app.js';

const at = '2026-01-01T00:00:00.000Z';

function task(id: number, patch: Partial<Task> = {}): Task {
  return {
    id,
    subject: `Task number ${id}`,
    description: '',
    status: 'pending',
    owner: null,
    role: null,
    stage: null,
    blockedBy: [],
    blocks: [],
    pipeline: null,
    revision: 0,
    usage: { calls: 0, inputTokens: 0, outputTokens: 0 },
    attempts: 0,
    notBefore: null,
    claims: 0,
    lease: null,
    handoff: '',
    artifacts: {},
    result: null,
    history: [],
    createdAt: at,
    updatedAt: at,
    ...patch,
  };
}

function member(name: string, patch: Partial<Member> = {}): Member {
  return { name, role: name, status: 'idle', task: null, since: at, pid: 1, ...patch };
}

describe('board panel', () => {
  it('shows markers, stage, revision, owner and the pipeline status', () => {
    const tasks = [
      task(1, { subject: 'Analyse: organizer', status: 'completed', stage: 'requirements', owner: 'analyst', pipeline: 1 }),
      task(2, { subject: 'Implement: organizer', status: 'completed', stage: 'implementation', owner: 'engineer', pipeline: 1 }),
      task(3, { subject: 'Review organize.py', status: 'completed', stage: 'review', owner: 'reviewer', pipeline: 1, artifacts: { verdict: 'changes requested' } }),
      task(4, { subject: 'Revise (1): organizer', status: 'in_progress', stage: 'implementation', revision: 1, owner: 'engineer', pipeline: 1 }),
      task(5, { subject: 'Broken', status: 'failed' }),
      task(6, { subject: 'Later', status: 'pending', role: 'engineer' }),
      task(7, { subject: 'Dropped', status: 'cancelled' }),
    ];
    const { lastFrame } = render(<BoardPanel view={boardView(tasks, 12)} width={90} />);
    const frame = lastFrame()!;
    // Every task is counted in one of the kinds: the cancelled too.
    expect(frame).toContain('7 tasks · 1 pending · 1 in progress · 3 done · 1 failed · 1 cancelled');
    expect(frame).toContain('[x] #1: Analyse: organizer (requirements) @analyst');
    expect(frame).toContain('[>] #4: Revise (1): organizer (implementation r1) @engineer');
    expect(frame).toContain('[!] #5: Broken');
    expect(frame).toContain('[ ] #6: Later (engineer)');
    expect(frame).toContain('pipeline #1 active');
  });

  it('puts each pipeline whole on a line: one that does not fit goes to the next, not cut in its middle', () => {
    const tasks = [1, 2, 3, 4].map((id) => task(id, { subject: `Analyse: ${id}`, status: 'completed', stage: 'requirements', owner: 'analyst', pipeline: id, usage: { calls: 15, inputTokens: 45_000, outputTokens: 5_508 } }));
    // 96 columns inside the panel's border and padding, in the 100 the test renders in.
    const { lastFrame } = render(<BoardPanel view={boardView(tasks, 12)} width={96} pipelineLines={4} />);
    const lines = lastFrame()!.split('\n').filter((line) => line.includes('pipeline #'));
    // Four of ~55 characters do not fit one line.
    expect(lines.length).toBeGreaterThan(1);
    const items = lines.flatMap((line) => line.match(/pipeline #\d+ [^(]*\([^)]*\)/g) ?? []);
    expect(items.map((item) => item.trim())).toEqual([1, 2, 3, 4].map((id) => `pipeline #${id} active (15 model calls · 50,508 tokens)`));
  });

  it('keeps the pipelines to the lines it is given: the newest, and how many older ones it left out', () => {
    const tasks = Array.from({ length: 15 }, (_, i) => task(i + 1, { subject: `Analyse: ${i + 1}`, stage: 'requirements', pipeline: i + 1 }));
    const frame = render(<BoardPanel view={boardView(tasks, 3)} width={96} pipelineLines={1} />).lastFrame()!;
    const lines = frame.split('\n').filter((line) => line.includes('pipeline #'));
    expect(lines).toHaveLength(1);
    const ids = [...lines[0]!.matchAll(/pipeline #(\d+) active/g)].map((match) => Number(match[1]));
    // The newest, in order, whole; the rest counted.
    expect(ids.length).toBeGreaterThan(0);
    expect(ids).toEqual(Array.from({ length: ids.length }, (_, i) => 16 - ids.length + i));
    expect(lines[0]).toContain(`+${15 - ids.length} more (/tasks)`);
    expect(lines[0]).not.toContain('…');
  });

  it('says what became of an approved pipeline\'s branch: merged into its base, or discarded', () => {
    const approved = (id: number, outcome?: NonNullable<Task['artifacts']['outcome']>) =>
      task(id, { subject: `Review ${id}`, status: 'completed', stage: 'review', owner: 'reviewer', pipeline: id, artifacts: { verdict: 'approved', final: true, ...(outcome ? { outcome } : {}) } });
    const tasks = [approved(1, { action: 'merged', into: 'main', commit: 'a'.repeat(40), by: 'lead' }), approved(2, { action: 'discarded', by: 'lead' }), approved(3)];
    const frame = render(<BoardPanel view={boardView(tasks, 12)} width={96} pipelineLines={3} />).lastFrame()!;
    expect(frame).toMatch(/pipeline #1 approved · merged into main\b/);
    expect(frame).toMatch(/pipeline #2 approved · discarded\b/);
    expect(frame).toMatch(/pipeline #3 approved(?! ·)/);
  });

  it('shows the newest tasks and every task in progress of a board of 1,000, with counts', () => {
    const tasks = Array.from({ length: 1000 }, (_, i) =>
      task(i + 1, { status: i === 41 ? 'in_progress' : i < 900 ? 'completed' : 'pending', owner: i === 41 ? 'engineer' : null }),
    );
    const view = boardView(tasks, 12);
    const { lastFrame } = render(<BoardPanel view={view} width={90} />);
    const frame = lastFrame()!;
    expect(view.shown.map((t) => t.id)).toEqual([42, 990, 991, 992, 993, 994, 995, 996, 997, 998, 999, 1000]);
    expect(frame).toContain('1000 tasks · 100 pending · 1 in progress · 899 done · showing 12');
    expect(frame).toContain('[>] #42: Task number 42 @engineer');
    expect(frame).toContain('[ ] #1000: Task number 1000');
    expect(frame).not.toContain('#989:');
    // The panel renders the 12 rows it shows, not the 1,000: its cost does not grow with the board.
    expect(frame.split('\n').length).toBeLessThan(20);
    expect(frame.match(/#\d+:/g)).toHaveLength(12);
  });
});

describe('team panel', () => {
  it('shows status, current task and the idle reason', () => {
    const tasks = new Map([[4, task(4, { subject: 'Revise (1): organizer' })]]);
    const { lastFrame } = render(
      <TeamPanel
        lead="lead"
        tasks={tasks}
        members={[
          member('analyst', { status: 'waiting', task: 1, reason: 'waiting for an answer' }),
          member('engineer', { status: 'working', task: 4 }),
          member('reviewer', { reason: 'looking for work' }),
        ]}
      />,
    );
    const frame = lastFrame()!;
    expect(frame).toContain('analyst (analyst) waiting — waiting for an answer · #1');
    expect(frame).toContain('engineer (engineer) working #4 Revise (1): organizer');
    expect(frame).toContain('reviewer (reviewer) idle — looking for work');
    // A spinner frame sits in front of the working teammate only.
    expect(frame).toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] engineer/);
    expect(frame).not.toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] analyst/);
  });

  it("shows what each teammate and the whole session spent", () => {
    const { lastFrame } = render(
      <TeamPanel lead="lead" tasks={new Map()} members={[member('analyst'), member('engineer')]} spend={{ analyst: '12k tok · $0.041', '': '12k tok · $0.041' }} />,
    );
    const frame = lastFrame()!;
    expect(frame).toContain('Team lead: lead · spent 12k tok · $0.041');
    expect(frame).toContain('analyst (analyst) idle [12k tok · $0.041]');
    expect(frame).toMatch(/engineer \(engineer\) idle(?! \[)/);
  });

  it('shows how many unreadable inbox lines a member (or the lead) had moved aside', () => {
    const { lastFrame } = render(<TeamPanel lead="lead" tasks={new Map()} members={[member('analyst'), member('engineer')]} rejected={{ analyst: 3, lead: 1 }} />);
    const frame = lastFrame()!;
    expect(frame).toContain('Team lead: lead ⚠ 1 unreadable inbox line');
    expect(frame).toContain('analyst (analyst) idle ⚠ 3 unreadable inbox lines');
    expect(frame).toMatch(/engineer \(engineer\) idle(?! ⚠)/);
  });

  it('says how to add a teammate when the team is empty', () => {
    const { lastFrame } = render(<TeamPanel lead="lead" tasks={new Map()} members={[]} />);
    expect(lastFrame()).toContain('No teammates — /spawn <name> <role>');
  });

  it('says the team is starting, not that there is none, while it starts', () => {
    const { lastFrame } = render(<TeamPanel lead="lead" tasks={new Map()} members={[]} starting />);
    expect(lastFrame()).toContain('Starting the team…');
    expect(lastFrame()).not.toContain('No teammates');
  });

  it('on fewer lines than members, shows those at work and counts the rest by status', () => {
    const members = [
      ...Array.from({ length: 8 }, (_, i) => member(`engineer-${i + 1}`, { role: 'engineer' })),
      member('analyst', { status: 'waiting', task: 1, reason: 'waiting for an answer' }),
      member('reviewer', { status: 'working', task: 3 }),
      member('reviewer-2', { role: 'reviewer', status: 'shutdown', reason: 'idle for 60 s' }),
    ];
    const frame = render(<TeamPanel lead="lead" tasks={new Map()} members={members} rows={4} />).lastFrame()!;
    const shown = frame.split('\n').filter((line) => / \((analyst|engineer|reviewer)\) /.test(line));
    expect(shown.map((line) => /([\w-]+) \((?:analyst|engineer|reviewer)\)/.exec(line)?.[1])).toEqual(['engineer-1', 'analyst', 'reviewer']);
    expect(frame).toContain('and 8 more: 7 idle, 1 shutdown (/team lists them)');
    // One this session starts again for work rests, and is said so, as is its count.
    const rests = { ...member('analyst-2', { role: 'analyst', status: 'shutdown', reason: 'idle for 60 s' }), resting: true };
    expect(render(<TeamPanel lead="lead" tasks={new Map()} members={[rests]} />).lastFrame()).toContain('analyst-2 (analyst) resting — idle for 60 s');
    expect(render(<TeamPanel lead="lead" tasks={new Map()} members={[...members, rests]} rows={4} />).lastFrame()).toContain('and 9 more: 7 idle, 1 shutdown, 1 resting (/team lists them)');
    // Room for all: all, and no count.
    const all = render(<TeamPanel lead="lead" tasks={new Map()} members={members} rows={11} />).lastFrame()!;
    expect(all).toContain('engineer-8 (engineer)');
    expect(all).not.toContain('more:');
  });
});

describe('question box', () => {
  const question = { questionId: 'q1', from: 'analyst', question: 'Which folders?', task: 3, pipeline: 1, at };

  it('shows who asks and how to answer', () => {
    const { lastFrame } = render(<QuestionBox questions={[question, { ...question, questionId: 'q2' }]} auto={false} />);
    expect(lastFrame()).toContain('analyst asks (pipeline #1): Which folders?');
    // A general task's question (no pipeline) is named by its task.
    expect(render(<QuestionBox questions={[{ ...question, pipeline: null }]} auto={false} />).lastFrame()).toContain('analyst asks (task #3): Which folders?');
    expect(lastFrame()).toContain('type the answer and press Enter · 1 more waiting');
    // With another pipeline's question waiting, how to answer that one first.
    const two = render(<QuestionBox questions={[question, { ...question, questionId: 'q2', pipeline: 2 }]} auto={false} />).lastFrame()!.replace(/[│║\s]+/g, ' ');
    expect(two).toContain("type the answer and press Enter · 1 more waiting (#2: '#2 <answer>' answers pipeline #2's)");
    // The front question's own pipeline, waiting again, is no way to reach another: not offered.
    const same = render(<QuestionBox questions={[question, { ...question, questionId: 'q2' }]} auto={false} />).lastFrame()!.replace(/[│║\s]+/g, ' ');
    expect(same).toContain('type the answer and press Enter · 1 more waiting ');
    expect(same).not.toContain("'#1 <answer>'");
  });

  it('says the simulated user is on it with --auto, and is empty without questions', () => {
    expect(render(<QuestionBox questions={[question]} auto />).lastFrame()).toContain('the simulated user is answering');
    expect(render(<QuestionBox questions={[]} auto={false} />).lastFrame()).toBe('');
  });
});

describe('header', () => {
  it("shows what the session's teammates spent once they spent something", () => {
    const quiet = render(<Header model="claude-sonnet-4" dir="/tmp/b" team="t" lead="lead" auto={false} />);
    expect(quiet.lastFrame()).not.toContain('spent');
    const spent = render(<Header model="claude-sonnet-4" dir="/tmp/b" team="t" lead="lead" auto={false} spent="38k tok · $0.137" />);
    expect(spent.lastFrame()).toContain('autoteam · model: claude-sonnet-4\nboard /tmp/b · team t · lead lead · spent 38k tok · $0.137');
  });
});

describe('the live frame', () => {
  it('keeps to two thirds of the terminal, so a command\'s output shows above it; the header goes on a short one', () => {
    // What the frame takes: header, prompt, "lead is thinking…", the board (border, title, tasks,
    // pipelines), the team (border, title, members) and a question's box (border, two lines of question, hint).
    const height = (layout: ReturnType<typeof frameLayout>, members: number, asking: boolean) => (layout.header ? 2 : 0) + 1 + 1 + 3 + layout.taskRows + layout.pipelineLines + 3 + Math.min(Math.max(1, members), layout.memberRows) + (asking ? 5 : 0);
    for (const [rows, members, asking] of [[24, 3, false], [24, 0, false], [24, 12, false], [30, 12, false], [40, 3, false], [30, 3, true], [40, 12, true]] as const) {
      const layout = frameLayout(rows, members, asking);
      expect(height(layout, members, asking), `${rows} rows, ${members} members${asking ? ', a question' : ''}`).toBeLessThanOrEqual(Math.floor((rows * 2) / 3));
    }
    // Never as tall as the terminal, a question waiting, down to 18 rows.
    for (let rows = 18; rows <= 60; rows++) expect(height(frameLayout(rows, 3, true), 3, true), `${rows} rows`).toBeLessThan(rows);
    // A question waiting on 80 × 24: the member it is from beside the count, not the count alone.
    expect(frameLayout(24, 3, true).memberRows).toBe(2);
    // 80 × 24 with the default team: all three members, two tasks, and 8 rows for the log.
    expect(frameLayout(24, 3, false)).toEqual({ header: true, taskRows: 2, memberRows: 3, pipelineLines: 1 });
    // A tall terminal shows as much as before: 12 tasks, every member, two lines of pipelines.
    expect(frameLayout(60, 12, false)).toEqual({ header: true, taskRows: 12, memberRows: 12, pipelineLines: 2 });
    expect(frameLayout(14, 3, false).header).toBe(false);
  });
});

describe('the pipelines line on 80 columns', () => {
  it('keeps the newest even when its entry and the count do not fit: cut at its end, the count whole', () => {
    const tasks = [1, 2].map((id) => task(id, { subject: `Review ${id}`, status: 'completed', stage: 'review', owner: 'reviewer', pipeline: id, usage: { calls: 15, inputTokens: 45_000, outputTokens: 5_508 }, artifacts: { verdict: 'approved', final: true, outcome: { action: 'merged', into: 'main', commit: 'a'.repeat(40), by: 'lead' } } }));
    const frame = render(<Box width={80}><BoardPanel view={boardView(tasks, 3)} width={76} pipelineLines={1} /></Box>).lastFrame()!;
    const lines = frame.split('\n').filter((line) => line.includes('pipeline #') || line.includes('more (/tasks)'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/pipeline #2 approved · merged into main.*…\s+\+1 more \(\/tasks\)/);
  });
});
