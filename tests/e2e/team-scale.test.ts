/**
 * Several requirements on one team, end to end with the built CLI (run `npm run build` first): `run`
 * with two requirements and two engineers in real worker threads on a git repository, and `autoteam
 * post` with no lead (the worktree made at once) and beside a running REPL lead (the team takes it).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CliChild } from '../helpers/cli-child.js';
import { playbookAnswer } from '../../src/core/model/scripted/playbook.js';
import { cleanEnv, cliEntry, DOWNLOADS_REQUIREMENT, describeRun, readTasks, runCli, tempBoard } from '../helpers/pipeline-cli.js';
import { personGit } from '../helpers/person-git.js';
import { waitUntil } from '../helpers/repl-session.js';

const WORDCOUNT_REQUIREMENT = 'Write a Python script that counts the words in a text file.';
const python = spawnSync('python3', ['--version']).status === 0;
const roots: string[] = [];

const git = personGit;

/** The team registry as the board holds it. */
function readRegistry(root: string): Array<{ name: string; status: string }> {
  const file = path.join(root, '.team', 'config.json');
  return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as { members: Array<{ name: string; status: string }> }).members : [];
}

function makeRepo(): string {
  const root = tempBoard('autoteam-scale-repo-');
  roots.push(root);
  git(root, 'init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(root, 'README.md'), '# A project\n');
  git(root, 'add', 'README.md');
  git(root, 'commit', '-q', '-m', 'Initial commit');
  return root;
}

afterAll(() => {
  for (const root of roots) fs.rmSync(root, { recursive: true, force: true });
});

interface Summary {
  pipeline: number;
  status: string;
  requirement: string;
  usage: { calls: number };
  wallMs: number;
  files: string[];
  git?: { branch: string; commit: string | null; merged?: { into: string; commit: string } };
}

describe.runIf(python)('autoteam run with two requirements and --engineers 2', () => {
  it('works both pipelines at once, each engineer on its own pipeline, merges both through the queue (autoMerge), and reports each', async () => {
    const repo = makeRepo();
    const start = git(repo, 'rev-parse', 'HEAD');
    // autoMerge: the run ends when the merge queue has merged both into main.
    fs.writeFileSync(path.join(repo, 'autoteam.config.json'), JSON.stringify({ autoMerge: true }));
    git(repo, 'add', 'autoteam.config.json');
    git(repo, 'commit', '-q', '-m', 'autoMerge');
    const run = await runCli(['run', '--auto', '--json', '--engineers', '2', '--start-stage', 'implementation', DOWNLOADS_REQUIREMENT, WORDCOUNT_REQUIREMENT], { cwd: repo });
    expect(run.code, describeRun(run)).toBe(0);
    const summaries = JSON.parse(run.stdout) as Summary[];
    expect(summaries.map(({ pipeline, status, requirement }) => ({ pipeline, status, requirement }))).toEqual([
      { pipeline: 1, status: 'approved', requirement: DOWNLOADS_REQUIREMENT },
      { pipeline: 2, status: 'approved', requirement: WORDCOUNT_REQUIREMENT },
    ]);
    for (const summary of summaries) {
      expect(summary.usage.calls).toBeGreaterThan(0);
      expect(summary.git!.commit).toMatch(/^[0-9a-f]{40}$/);
      expect(summary.git!.merged?.into).toBe('main');
      // Merged: the branch is gone and main holds the merged commit.
      expect(git(repo, 'branch', '--list', summary.git!.branch)).toBe('');
      expect(git(repo, 'merge-base', '--is-ancestor', summary.git!.merged!.commit, 'main')).toBe('');
    }
    expect(summaries[0]!.git!.branch).not.toBe(summaries[1]!.git!.branch);
    // Each pipeline's wall time is its own, to its merge: the queue merges one after the other.
    const mergedAt = (pipeline: number) => Math.max(...readTasks(repo).filter((task) => task.pipeline === pipeline).map((task) => Date.parse(task.updatedAt)));
    const [first, second] = [summaries[0]!, summaries[1]!].sort((a, b) => mergedAt(a.pipeline) - mergedAt(b.pipeline));
    expect(first!.wallMs).toBeGreaterThan(0);
    expect(first!.wallMs).toBeLessThan(second!.wallMs);
    // Two fast-forwards (the second rebased onto the first and checked again), no merge commit, and
    // the person's tree clean and holding both programs.
    expect(git(repo, 'rev-list', '--count', `${start}..main`)).toBe('3');
    expect(git(repo, 'rev-list', '--merges', '--count', `${start}..main`)).toBe('0');
    expect(git(repo, 'status', '--porcelain')).toBe('');
    expect(git(repo, 'ls-files').split('\n').filter((file) => file.endsWith('.py')).length).toBeGreaterThanOrEqual(2);
    // The rebased one's diff is its own change, against the tip it was rebased onto: none of the first's files.
    const diff = await runCli(['diff', String(second!.pipeline)], { cwd: repo });
    expect(diff.code, describeRun(diff)).toBe(0);
    expect(diff.stdout).toMatch(new RegExp(`^pipeline #${second!.pipeline} · merged into main at [0-9a-f]{12} · its commit [0-9a-f]{12} from [0-9a-f]{12}\n`));
    for (const file of second!.files) expect(diff.stdout).toContain(`+++ b/${file}`);
    for (const file of first!.files) expect(diff.stdout).not.toContain(`b/${file}`);
    // Both implementation tasks were posted before either engineer could finish one: claims are
    // exclusive, so each engineer took a different pipeline's.
    const firstImplementations = readTasks(repo).filter((task) => task.stage === 'implementation' && task.revision === 0);
    expect(firstImplementations.map((task) => task.pipeline)).toEqual([1, 2]);
    expect(new Set(firstImplementations.map((task) => task.owner))).toEqual(new Set(['engineer', 'engineer-2']));
    const members = (JSON.parse(fs.readFileSync(path.join(repo, '.team', 'config.json'), 'utf8')) as { members: Array<{ name: string }> }).members.map((member) => member.name);
    expect(members.sort()).toEqual(['analyst', 'engineer', 'engineer-2', 'reviewer']);
  });

  it('as text: each teammate line names its pipeline, and the model is named once, on the overall line', async () => {
    const root = tempBoard();
    roots.push(root);
    const run = await runCli(['run', '--auto', '--dir', root, DOWNLOADS_REQUIREMENT, WORDCOUNT_REQUIREMENT], { cwd: root });
    expect(run.code, describeRun(run)).toBe(0);
    const lines = run.stdout.split('\n');
    const pipelineOf = new Map(readTasks(root).map((task) => [task.id, task.pipeline]));
    // Both were posted before any work: every teammate line is tagged, with the right pipeline, to the end.
    const teammateLines = lines.filter((line) => /^ {2}\[(p\d+ )?(analyst|engineer|reviewer)/.test(line));
    expect(teammateLines.length).toBeGreaterThan(20);
    expect(teammateLines.filter((line) => !/^ {2}\[p[12] /.test(line)), describeRun(run)).toEqual([]);
    const claims = teammateLines.map((line) => /^ {2}\[p(\d) \S+\] (?:claimed|completed) #(\d+)/.exec(line)).filter((match) => match !== null);
    expect(claims.length).toBeGreaterThanOrEqual(4);
    for (const [, pipeline, task] of claims) expect(pipelineOf.get(Number(task))).toBe(Number(pipeline));
    // The team's leaving at the end is one line, not one per teammate.
    expect(lines.filter((line) => /shut(ting)? down/.test(line))).toEqual(['  the team shut down (3 teammates)']);
    expect(lines.filter((line) => line.includes('offline scripted model'))).toEqual([
      expect.stringMatching(/^autoteam run — offline scripted model/),
      expect.stringMatching(/^overall: 2 pipelines · 2 approved, 0 not · .* · offline scripted model/),
    ]);
  });
});

describe.runIf(python)('a team member of role `any`', () => {
  it('fills in for the role the team lacks, and leaves the reviewer its reviews', async () => {
    const root = tempBoard('autoteam-scale-any-');
    roots.push(root);
    const team = [
      { name: 'analyst', role: 'analyst' },
      { name: 'generalist', role: 'any' },
      { name: 'reviewer', role: 'reviewer' },
    ];
    fs.writeFileSync(path.join(root, 'autoteam.config.json'), JSON.stringify({ team }));
    const run = await runCli(['run', '--auto', '--timeout', '2m', '--dir', root, WORDCOUNT_REQUIREMENT], { cwd: root });
    expect(run.code, describeRun(run)).toBe(0);
    expect(run.stdout).toContain('pipeline #1: APPROVED');
    const tasks = readTasks(root);
    expect(tasks.filter((task) => task.stage === 'implementation').map((task) => task.owner), describeRun(run)).toEqual(['generalist', 'generalist']);
    expect(tasks.filter((task) => task.stage === 'review').map((task) => task.owner), describeRun(run)).toEqual(['reviewer', 'reviewer']);
  });
});

describe.runIf(python)('a worker of role `any` beside a lead whose teammates idled out', () => {
  it("leaves the lead's analyst and reviewer their work: the lead starts them again", async () => {
    const root = tempBoard('autoteam-scale-any-rest-');
    roots.push(root);
    const repl = CliChild.start(['--auto', '--engineers', '0', '--idle-timeout', '1s', '--dir', root], { cwd: root, stdin: 'pipe' });
    const worker = CliChild.start(['worker', '--name', 'generalist', '--role', 'any', '--dir', root], { cwd: root });
    try {
      const resting = (name: string) => readRegistry(root).some((member) => member.name === name && member.status === 'shutdown');
      await waitUntil(() => resting('analyst') && resting('reviewer'), 'the analyst and the reviewer to idle out');
      await worker.waitForLine((line) => line.includes('idle'), 'the generalist to wait for work');
      repl.write(`/post ${WORDCOUNT_REQUIREMENT}`);
      await repl.waitForLine((line) => line.startsWith('= Pipeline #1 approved'), 'the pipeline approved');
      const owners = (stage: string) => readTasks(root).filter((task) => task.stage === stage).map((task) => task.owner);
      expect(owners('requirements'), repl.lines.join('\n')).toEqual(['analyst']);
      expect(new Set(owners('implementation'))).toEqual(new Set(['generalist']));
      expect(new Set(owners('review'))).toEqual(new Set(['reviewer']));
      repl.write('/quit');
      expect(await repl.exited).toEqual({ code: 0, signal: null });
    } finally {
      await worker.stop();
      await repl.stop();
    }
  });
});

describe.runIf(python)('run --engineers 0 beside a live worker engineer', () => {
  it('is refused on a board with no engineer, and works with the worker that is on the board', async () => {
    const root = tempBoard('autoteam-scale-run-worker-');
    roots.push(root);
    const alone = await runCli(['run', '--auto', '--engineers', '0', '--dir', root, WORDCOUNT_REQUIREMENT], { cwd: root });
    expect(alone.code, describeRun(alone)).toBe(2);
    expect(alone.stderr.trim()).toBe('autoteam: --engineers: no engineer on this team, and a run waits for its pipelines to end, so it needs one (give 1 or more, or start an autoteam worker --role engineer on the board first)');
    // Refused before a board was made.
    expect(fs.existsSync(path.join(root, '.tasks'))).toBe(false);

    // As the refusal says: a worker of the role, with no name of its own (it is named after its role).
    const worker = CliChild.start(['worker', '--role', 'engineer', '--dir', root], { cwd: root });
    try {
      await worker.waitForLine((line) => line.startsWith('[engineer] idle'), 'the worker to wait for work');
      const run = await runCli(['run', '--auto', '--engineers', '0', '--dir', root, WORDCOUNT_REQUIREMENT], { cwd: root });
      expect(run.code, describeRun(run)).toBe(0);
      expect(run.stderr).toContain('note: --engineers: no engineer on this team: the live engineer already on the board works its tasks');
      expect(new Set(readTasks(root).filter((task) => task.stage === 'implementation').map((task) => task.owner))).toEqual(new Set(['engineer']));

      // The REPL says the same beside it, not that engineer tasks wait for one to join: sized by the
      // flag, and with a configured team that lacks the role (not warned of by the config's own check).
      const repls = [
        { flags: ['--engineers', '0'], note: 'autoteam: note: --engineers: no engineer on this team: the live engineer already on the board works its tasks', absent: 'engineer tasks wait until one joins' },
        { flags: [], team: ['analyst', 'reviewer'], note: 'no engineer on this team: the live engineer already on the board works its tasks', absent: "no teammate in team has the role 'engineer'" },
      ];
      for (const { flags, team, note, absent } of repls) {
        if (team) fs.writeFileSync(path.join(root, 'autoteam.config.json'), JSON.stringify({ team: team.map((role) => ({ name: role, role })) }));
        const repl = CliChild.start([...flags, '--dir', root], { cwd: root, stdin: 'pipe' });
        try {
          await repl.waitForLine((line) => line.startsWith('Type /help'), 'the REPL to start');
          expect(repl.stderr).toContain(note);
          expect(repl.stderr).not.toContain(absent);
          repl.write('/quit');
          expect(await repl.exited).toEqual({ code: 0, signal: null });
        } finally {
          await repl.stop();
        }
      }
    } finally {
      await worker.stop();
    }
  });
});

describe('autoteam post', () => {
  // Two requirements that ask the same two questions (folders, then name conflicts); the answers
  // each pipeline was given show in its criteria.
  const criteriaOf = (root: string, pipeline: number) =>
    readTasks(root)
      .filter((task) => task.pipeline === pipeline && task.stage === 'requirements')
      .flatMap((task) => (task.artifacts.criteria ?? []).map((entry) => entry.criterion));
  const PICTURES = ['Pictures and Misc only', 'skip and warn'];
  const PHOTOS = ['Photos: jpg, png; Docs: pdf; everything else into Misc', 'overwrite'];

  it('plain answer lines reach the pipelines in the order the requirements were given', async () => {
    const root = tempBoard();
    roots.push(root);
    // A blank line and a pipeline's number alone answer nothing; a line no question came for is said.
    const input = ['', ...PICTURES, '#2', ...PHOTOS, 'one too many'].join('\n') + '\n';
    const run = await runCli(['run', '--dir', root, DOWNLOADS_REQUIREMENT, DOWNLOADS_REQUIREMENT], { cwd: root, input });
    expect(run.code, describeRun(run)).toBe(0);
    expect(run.stdout).toContain("note: standard input's line '#2' has no answer after the pipeline's number: skipped");
    expect(run.stdout).toContain("note: a line of standard input was left unused, no question came for it (the first: 'one too many')");
    expect(run.stdout).not.toContain('analysts ask at once');
    expect(criteriaOf(root, 1)[0], describeRun(run)).toMatch(/: Pictures \(\.jpg.*\); Misc \(anything else\)$/);
    expect(criteriaOf(root, 2)[0], describeRun(run)).toMatch(/: Photos \(\.jpg, \.png\); Docs \(\.pdf\); Misc \(anything else\)$/);
  });

  it('a line "#N answer" answers pipeline N, whichever of two analysts asks first', async () => {
    const root = tempBoard();
    roots.push(root);
    const input = [...PHOTOS.map((line) => `#2 ${line}`), ...PICTURES.map((line) => `#1 ${line}`)].join('\n') + '\n';
    const run = await runCli(['run', '--analysts', '2', '--dir', root, DOWNLOADS_REQUIREMENT, DOWNLOADS_REQUIREMENT], { cwd: root, input });
    expect(run.code, describeRun(run)).toBe(0);
    expect(criteriaOf(root, 1)[0], describeRun(run)).toMatch(/: Pictures \(\.jpg.*\); Misc \(anything else\)$/);
    expect(criteriaOf(root, 1)[1]).toMatch(/left where it is, with a warning/);
    expect(criteriaOf(root, 2)[0], describeRun(run)).toMatch(/: Photos \(\.jpg, \.png\); Docs \(\.pdf\); Misc \(anything else\)$/);
    expect(run.stdout).toContain('! person answers analyst');
    expect(run.stdout).toContain("note: 2 analysts ask at once, so a plain answer line goes to whichever question comes first; start a line with '#N ' to answer pipeline N's");
  });

  it('a line "#N answer" naming no pipeline of the run is said, and answers the question in front as typed', async () => {
    const root = tempBoard();
    roots.push(root);
    // Pipeline #1 was posted and cancelled before: the run's is #2, and the person types #1.
    expect((await runCli(['post', '--dir', root, DOWNLOADS_REQUIREMENT], { cwd: root })).code).toBe(0);
    expect((await runCli(['cancel', '1', '--dir', root], { cwd: root })).code).toBe(0);
    const input = PICTURES.map((line) => `#1 ${line}`).join('\n') + '\n';
    const run = await runCli(['run', '--dir', root, DOWNLOADS_REQUIREMENT], { cwd: root, input });
    expect(run.code, describeRun(run)).toBe(0);
    const notes = run.stdout.split('\n').filter((line) => line.startsWith('note: #1 '));
    expect(notes, describeRun(run)).toEqual([
      "note: #1 names no pipeline of this run (#2): the whole line, as typed, answers pipeline #2's question",
      "note: #1 names no pipeline of this run (#2): the whole line, as typed, answers pipeline #2's question",
    ]);
    const qa = readTasks(root).find((task) => task.pipeline === 2 && task.stage === 'requirements')!.artifacts.qa ?? [];
    expect(qa.map((entry) => entry.answer)).toEqual(PICTURES.map((line) => `#1 ${line}`));
  });

  it("a question an earlier run left waiting is answered by a '#N' line only: a plain line answers the run's own", async () => {
    const root = tempBoard();
    roots.push(root);
    const first = await runCli(['run', '--dir', root, DOWNLOADS_REQUIREMENT], { cwd: root, input: '' });
    expect(first.code, describeRun(first)).toBe(1);
    // Plain lines alone: not given to #1's question, and the run, whose pipeline waits behind it, says so.
    const plain = await runCli(['run', '--dir', root, WORDCOUNT_REQUIREMENT], { cwd: root, input: 'Read the file named on the command line.\n' });
    expect(plain.code, describeRun(plain)).toBe(1);
    expect(plain.stdout).not.toContain('! person answers');
    // What the team hands back as it shuts down is not said to wait for a teammate.
    expect(plain.stdout).not.toContain('waits: task');
    expect(plain.stdout).toContain(
      "pipeline #2: LEFT OPEN — standard input ended with analyst's question for pipeline #1 (at work before this run; the run's pipelines wait behind it, and only a line '#1 <answer>' answers it) unanswered",
    );
    // The plain line first: it waits for this run's own question; #1's and #2's (left open above) take their '#N' lines.
    const input = ['Read the file named on the command line.', ...PICTURES.map((line) => `#1 ${line}`), '#2 Read the file named on the command line.'].join('\n') + '\n';
    const run = await runCli(['run', '--dir', root, WORDCOUNT_REQUIREMENT], { cwd: root, input });
    expect(run.code, describeRun(run)).toBe(0);
    expect(run.stdout).toContain("  a line '#1 <answer>' on standard input answers it; other lines answer this run's questions");
    expect(run.stdout).toContain("  a line '#2 <answer>' on standard input answers it; other lines answer this run's questions");
    expect(run.stdout).not.toContain('waits: task');
    expect(run.stdout).toContain('! person answers analyst (pipeline #3): Read the file named on the command line.');
    expect(criteriaOf(root, 1)[0], describeRun(run)).toMatch(/: Pictures \(\.jpg.*\); Misc \(anything else\)$/);
  });

  it('run --file - takes the requirements from standard input, and then says that no answer can come from there', async () => {
    const root = tempBoard();
    roots.push(root);
    const run = await runCli(['run', '--file', '-', '--dir', root], { cwd: root, input: `${WORDCOUNT_REQUIREMENT}\n` });
    expect(run.code, describeRun(run)).toBe(1);
    expect(run.stdout).toContain("pipeline #1: LEFT OPEN — standard input ended with analyst's question for pipeline #1 unanswered (standard input held the requirements (--file -): use --auto, or give them in a file to answer on stdin)");
  });

  it('with no lead: posts each requirement of --file with its worktree and branch, and the tasks wait', async () => {
    const repo = makeRepo();
    fs.writeFileSync(path.join(repo, 'reqs.txt'), `# two at once\n${DOWNLOADS_REQUIREMENT}\n\n${WORDCOUNT_REQUIREMENT}\n`);
    const posted = await runCli(['post', '--json', '--file', 'reqs.txt'], { cwd: repo });
    expect(posted.code, describeRun(posted)).toBe(0);
    const entries = JSON.parse(posted.stdout) as Array<{ pipeline: number; task: number; stage: string; branch: string; worktree: string }>;
    expect(entries.map(({ pipeline, task, stage }) => ({ pipeline, task, stage }))).toEqual([
      { pipeline: 1, task: 1, stage: 'requirements' },
      { pipeline: 2, task: 2, stage: 'requirements' },
    ]);
    for (const entry of entries) {
      expect(entry.branch).toMatch(new RegExp(`^autoteam/${entry.pipeline}-write-a-python-script`));
      expect(git(entry.worktree, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe(entry.branch);
    }
    expect(readTasks(repo).map((task) => [task.status, task.owner])).toEqual([['pending', null], ['pending', null]]);
    // Who works them is said beside the JSON, on stderr.
    expect(posted.stderr).toMatch(/^note: no lead runs on this board: the tasks wait for one \(autoteam; autoteam --auto < \/dev\/null works them and ends\) or for workers/m);

    const text = await runCli(['post', WORDCOUNT_REQUIREMENT], { cwd: repo });
    expect(text.stdout).toMatch(/^posted pipeline #3: task #3 \(requirements\) — .* · branch autoteam\/3-write-a-python-script-that-counts-the\nno lead runs on this board: the tasks wait/);
    const missing = await runCli(['post', '--file', 'nope.txt'], { cwd: repo });
    expect(missing.code).toBe(2);
    expect(missing.stderr.trim()).toBe(`autoteam: --file ${path.join(repo, 'nope.txt')}: no such file`);
    // `-` is standard input; a requirement given twice is posted twice, and said.
    const piped = await runCli(['post', '--file', '-'], { cwd: repo, input: `# from a pipe\n${WORDCOUNT_REQUIREMENT}\n${WORDCOUNT_REQUIREMENT.toUpperCase()}\n` });
    expect(piped.code, describeRun(piped)).toBe(0);
    expect(piped.stdout).toMatch(/^posted pipeline #4: [^\n]*\nposted pipeline #5: /);
    // Its notes (the repository it works on, the repeat) are `note:` lines on stderr, not errors.
    expect(piped.stderr.trim().split('\n')).toEqual([
      'note: standard input line 3 repeats standard input line 2: it becomes a pipeline of its own, worked again',
      expect.stringMatching(/^note: on your repository .* \(main at [0-9a-f]{7}\): each pipeline works in its own worktree and branch autoteam\/<n>-…$/),
    ]);
    // Standard input is read once, and not from a terminal (`script` gives the command one).
    const twice = await runCli(['post', '--file', '-', '--file', '-'], { cwd: repo, input: `${WORDCOUNT_REQUIREMENT}\n` });
    expect([twice.code, twice.stderr.trim()]).toEqual([2, 'autoteam: --file - is given more than once: standard input is read once']);
    const terminal = spawnSync('script', ['-qec', `${process.execPath} ${cliEntry} post --file -`, '/dev/null'], { cwd: repo, env: cleanEnv(), encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    expect([terminal.status, terminal.stdout.trim()]).toEqual([2, 'autoteam: --file -: standard input is a terminal: pipe the requirements in (cat reqs.txt | autoteam post --file -), or give them as arguments or in a file']);
    expect(readTasks(repo)).toHaveLength(5);
  });

  it('reads --file - from a writer slower than the reader, to its end', () => {
    const root = tempBoard('autoteam-scale-slow-pipe-');
    roots.push(root);
    // The writer pauses between its lines: the reader finds the pipe empty several times before its end.
    const writer = 'for i in 1 2 3 4 5; do echo "Write a Python script that counts the words in text file $i."; sleep 0.2; done';
    const posted = spawnSync('sh', ['-c', `${writer} | "${process.execPath}" "${cliEntry}" post --json --file - --dir "${root}"`], { cwd: root, env: cleanEnv(), encoding: 'utf8' });
    expect(posted.status, posted.stderr).toBe(0);
    expect((JSON.parse(posted.stdout) as Array<{ pipeline: number }>).map((entry) => entry.pipeline)).toEqual([1, 2, 3, 4, 5]);
  });

  it.runIf(python)('beside a running REPL lead: the post takes no lease and the lead\'s team works it', async () => {
    const root = tempBoard('autoteam-scale-post-');
    roots.push(root);
    const repl = CliChild.start(['--auto', '--engineers', '2', '--dir', root], { cwd: root, stdin: 'pipe' });
    try {
      await repl.waitForLine((line) => line.startsWith('board '), 'the REPL to start its team');
      const posted = await runCli(['post', '--start-stage', 'implementation', '--dir', root, DOWNLOADS_REQUIREMENT], { cwd: root });
      expect(posted.code, describeRun(posted)).toBe(0);
      expect(posted.stdout).toMatch(new RegExp(`^posted pipeline #1: task #1 \\(implementation\\)[^\\n]*\\nthe lead \\(pid ${repl.pid} on [^)]+\\) and its team pick them up`));
      await repl.waitForLine((line) => line.startsWith('= Pipeline #1 approved'), 'the team to approve the posted pipeline');
      // The person at the REPL is told of the pipeline once, before its teammates' lines.
      const told = repl.lines.filter((line) => line.startsWith('pipeline #1 posted from another process: task #1 (implementation) — '));
      expect(told).toHaveLength(1);
      expect(repl.lines.indexOf(told[0]!)).toBeLessThan(repl.lines.findIndex((line) => /^\[engineer(-\d)?\] claimed #1/.test(line)));
      repl.write('/team');
      await repl.waitForLine((line) => /^\s+engineer-2 \(engineer\)/.test(line), '/team to list engineer-2');
      repl.write('/quit');
      expect(await repl.exited).toEqual({ code: 0, signal: null });
    } finally {
      await repl.stop();
    }
  });

  it('beside a lead started with --no-worktree in a repository: post works in workspace/<n> as the lead does, unless given --repo', async () => {
    const repo = makeRepo();
    const repl = CliChild.start(['--no-worktree', '--dir', repo], { cwd: repo, stdin: 'pipe' });
    try {
      await repl.waitForLine((line) => line.startsWith('board '), 'the REPL to start its team');
      // Started at implementation: no question in the way, and no worktree needed to see where it works.
      const posted = await runCli(['post', '--json', '--start-stage', 'implementation', WORDCOUNT_REQUIREMENT], { cwd: repo });
      expect(posted.code, describeRun(posted)).toBe(0);
      expect(JSON.parse(posted.stdout)).toEqual([expect.not.objectContaining({ branch: expect.anything() })]);
      expect(posted.stderr).toContain('note: the lead on this board was started with --no-worktree: these pipelines work in workspace/<n> as its own do (--repo gives them a worktree and branch)');
      expect(git(repo, 'branch', '--list', 'autoteam/*')).toBe('');
      const branched = await runCli(['post', '--json', '--start-stage', 'implementation', '--repo', repo, WORDCOUNT_REQUIREMENT], { cwd: repo });
      expect(JSON.parse(branched.stdout)).toEqual([expect.objectContaining({ pipeline: 2, branch: expect.stringMatching(/^autoteam\/2-/) })]);
    } finally {
      repl.write('/quit');
      await repl.stop();
    }
  });

  it.runIf(python)('beside a running `run`: the run waits for the posted pipeline too, instead of leaving it part-way', async () => {
    const root = tempBoard('autoteam-scale-run-post-');
    roots.push(root);
    // No --auto: each pipeline waits on the person's answers (stdin), so the test decides the order.
    const run = CliChild.start(['run', '--dir', root, DOWNLOADS_REQUIREMENT], { cwd: root, stdin: 'pipe' });
    const ASKS = /analyst asks \(pipeline #\d+\): /;
    const questions = () => run.lines.filter((line) => ASKS.test(line));
    const answer = (line: string) => run.write(playbookAnswer(line.split(ASKS)[1]!, []));
    try {
      await run.waitForLine((line) => ASKS.test(line), "the run's analyst to ask");
      const posted = await runCli(['post', '--dir', root, 'Write a Python script that sorts the files of a folder into subfolders by file type.'], { cwd: root });
      expect(posted.code, describeRun(posted)).toBe(0);
      expect(posted.stdout).toMatch(/^posted pipeline #2: task #2 \(requirements\)/);
      // The run's own pipeline: its analyst's two questions (the one analyst takes #2 after #1).
      answer(questions()[0]!);
      answer(await run.waitFor(() => questions()[1], "the run's second question"));
      // #2's questions wait unanswered until #1 is approved: #2 is still open when the run's own ends.
      await run.waitForLine((line) => line.startsWith('waiting for pipeline #2 too'), 'the run to wait for the posted pipeline');
      // By position: #2's analyst asks the same questions, word for word.
      let answered = 2;
      await run.waitFor(() => {
        for (const line of questions().slice(answered)) answer(line);
        answered = questions().length;
        return run.lines.find((line) => line.startsWith('pipeline #2 (posted beside this run): '));
      }, 'the run to finish the pipeline posted beside it');
      expect(await run.exited).toEqual({ code: 0, signal: null });
      expect(run.lines).toContain('pipeline #2 (posted beside this run): approved');
      // The pipeline's own end line first, then what the run says of it.
      const end = run.lines.findIndex((line) => line.trimStart().startsWith('= Pipeline #2 approved'));
      expect(end, run.lines.join('\n')).toBeGreaterThanOrEqual(0);
      expect(end).toBeLessThan(run.lines.indexOf('pipeline #2 (posted beside this run): approved'));
      expect(run.lines.filter((line) => line.trimStart().startsWith('pipeline #2 posted from another process: task #2 (requirements) — '))).toHaveLength(1);
      expect(readTasks(root).filter((task) => task.status === 'pending' || task.status === 'in_progress')).toEqual([]);
    } finally {
      await run.stop();
    }
  });

  it('says how a pipeline posted beside it ended when it ended before the run\'s own', { timeout: 300_000 }, async () => {
    const root = tempBoard('autoteam-scale-run-post-early-');
    roots.push(root);
    // Two analysts: the run's waits on the person's answer, the other works what is posted beside.
    const run = CliChild.start(['run', '--analysts', '2', '--dir', root, DOWNLOADS_REQUIREMENT], { cwd: root, stdin: 'pipe' });
    const ASKS = /analyst(?:-2)? asks \(pipeline #1\): /;
    const questions = () => run.lines.filter((line) => ASKS.test(line));
    try {
      await run.waitForLine((line) => ASKS.test(line), "the run's analyst to ask");
      // The offline model fails this one in a few steps, asking nothing.
      const posted = await runCli(['post', '--dir', root, 'Sort the lines of a file.'], { cwd: root });
      expect(posted.code, describeRun(posted)).toBe(0);
      await run.waitForLine((line) => line.trimStart().startsWith('= Pipeline #2 failed'), 'the pipeline posted beside to fail');
      let answered = 0;
      await run.waitFor(() => {
        for (const line of questions().slice(answered)) run.write(playbookAnswer(line.split(ASKS)[1]!, []));
        answered = questions().length;
        return run.lines.find((line) => line.startsWith('pipeline #2 (posted beside this run): '));
      }, 'the run to say how the pipeline posted beside it ended');
      expect(await run.exited).toEqual({ code: 0, signal: null });
      expect(run.lines.find((line) => line.startsWith('pipeline #2 (posted beside this run): '))).toMatch(/^pipeline #2 \(posted beside this run\): failed — /);
      expect(run.lines.some((line) => line.startsWith('waiting for pipeline #2'))).toBe(false);
    } finally {
      await run.stop();
    }
  });
});
