/**
 * Several teammates per role: the flags and `team[].count` parsed, the copies named, a role removed
 * by 0, the errors naming the flag or the config key; and `run`/`post`'s requirement lists. No threads.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { loadProjectConfig } from '../../src/core/config/project-config.js';
import { DEFAULT_TEAM } from '../../src/core/lead/session-types.js';
import { StageRegistry } from '../../src/core/stages/stage-registry.js';
import { parseRoleCount, roleCounts, sizeTeam, startingTeam } from '../../src/core/lead/team-size.js';
import { Command } from 'commander';
import { requirementsFileOption, requirementsFrom } from '../../src/cli/requirements-file.js';
import { printOverall, printSummary, type RunSummary } from '../../src/cli/run-summary.js';
import { endOfStopped } from '../../src/cli/run-command.js';
import type { PipelineState } from '../../src/core/stages/pipeline.js';

const dirs: string[] = [];
function folder(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-team-size-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

const names = (members: Array<{ name: string; role: string }>) => members.map((member) => `${member.name}:${member.role}`);
const NEEDED = ['analyst', 'engineer', 'reviewer'];

describe('sizing the team', () => {
  it('names copies -2, -3 after the first, in order, and keeps each member prompt', () => {
    const team = sizeTeam(DEFAULT_TEAM, roleCounts({ engineers: '3', reviewers: '2' }), NEEDED);
    expect(names(team.members)).toEqual(['analyst:analyst', 'engineer:engineer', 'engineer-2:engineer', 'engineer-3:engineer', 'reviewer:reviewer', 'reviewer-2:reviewer']);
    const prompted = sizeTeam([{ name: 'eng', role: 'engineer', prompt: 'Write Go.', count: 2 }], []).members;
    expect(prompted).toEqual([
      { name: 'eng', role: 'engineer', prompt: 'Write Go.' },
      { name: 'eng-2', role: 'engineer', prompt: 'Write Go.' },
    ]);
  });

  it('skips a name another member already has', () => {
    const team = sizeTeam([{ name: 'engineer', role: 'engineer', count: 3 }, { name: 'engineer-2', role: 'any' }], []);
    expect(names(team.members)).toEqual(['engineer:engineer', 'engineer-3:engineer', 'engineer-4:engineer', 'engineer-2:any']);
    // In any case: names that differ only in case would share an inbox file on a case-insensitive disk.
    expect(names(sizeTeam([{ name: 'Eng', role: 'engineer', count: 2 }, { name: 'eng-2', role: 'any' }], []).members)).toEqual(['Eng:engineer', 'Eng-3:engineer', 'eng-2:any']);
    expect(names(sizeTeam([{ name: 'Engineer', role: 'reviewer' }], roleCounts({ engineers: '1' })).members)).toEqual(['Engineer:reviewer', 'engineer-2:engineer']);
  });

  it('lets a flag cut a role down, or add a role the configured team lacks', () => {
    const configured = [{ name: 'alice', role: 'engineer', count: 3 }, { name: 'bob', role: 'engineer' }, { name: 'rita', role: 'reviewer' }];
    expect(names(sizeTeam(configured, roleCounts({ engineers: '2' })).members)).toEqual(['alice:engineer', 'alice-2:engineer', 'rita:reviewer']);
    expect(names(sizeTeam(configured, roleCounts({ analysts: '2' })).members)).toEqual([
      'alice:engineer', 'alice-2:engineer', 'alice-3:engineer', 'bob:engineer', 'rita:reviewer', 'analyst:analyst', 'analyst-2:analyst',
    ]);
  });

  it('removes a role at 0, and names what that leaves waiting (the REPL says it, run refuses)', () => {
    const flagged = sizeTeam(DEFAULT_TEAM, roleCounts({ reviewers: '0' }), NEEDED);
    expect(names(flagged.members)).toEqual(['analyst:analyst', 'engineer:engineer']);
    expect(flagged.unstaffed).toEqual([{ role: 'reviewer', by: '--reviewers' }]);
    const configured = sizeTeam([{ name: 'analyst', role: 'analyst' }, { name: 'engineer', role: 'engineer', count: 0 }, { name: 'reviewer', role: 'reviewer' }], [], NEEDED);
    expect(configured.unstaffed).toEqual([{ role: 'engineer', by: 'team.1.count' }]);
    // A member of role `any` works every stage: nothing waits.
    expect(sizeTeam([...DEFAULT_TEAM, { name: 'jack', role: 'any' }], roleCounts({ engineers: '0' }), NEEDED).unstaffed).toEqual([]);

    const said: string[] = [];
    const project = { stages: {} };
    expect(names(startingTeam(project, roleCounts({ engineers: '0' }), { strict: false, say: (line) => said.push(line) }))).toEqual(['analyst:analyst', 'reviewer:reviewer']);
    expect(said).toEqual(['--engineers: no engineer on this team, so engineer tasks wait until one joins (autoteam worker --role engineer)']);
    expect(() => startingTeam(project, roleCounts({ engineers: '0' }), { strict: true, say: () => undefined })).toThrow(/^--engineers: no engineer on this team, and a run waits for its pipelines to end, so it needs one \(give 1 or more, or start an autoteam worker --role engineer on the board first\)$/);
    // A live member of the role elsewhere on the board covers it: said, not refused.
    const noted: string[] = [];
    expect(startingTeam(project, roleCounts({ engineers: '0' }), { strict: true, say: (line) => noted.push(line), covered: (role) => role === 'engineer' }).map((member) => member.role)).toEqual(['analyst', 'reviewer']);
    expect(noted).toEqual(['note: --engineers: no engineer on this team: the live engineer already on the board works its tasks']);
  });

  it('a role the config\'s team never had: run refuses it as it refuses a count of 0, naming the team and how to add one; the REPL leaves it to the config\'s own warning', () => {
    const dir = folder();
    fs.writeFileSync(path.join(dir, 'autoteam.config.json'), JSON.stringify({ team: [{ name: 'ana', role: 'analyst' }, { name: 'bob', role: 'engineer' }] }));
    const project = loadProjectConfig(dir);
    expect(sizeTeam(project.team!, [], NEEDED).unstaffed).toEqual([{ role: 'reviewer', by: 'team', missing: true }]);
    expect(() => startingTeam(project, roleCounts({ engineers: '2' }), { strict: true, say: () => undefined })).toThrow(
      new RegExp(`^${path.join(dir, 'autoteam.config.json').replace(/[.]/g, '\\.')}: team: no reviewer on this team, and a run waits for its pipelines to end, so it needs one \\(add one to team or give --reviewers 1, or start an autoteam worker --role reviewer on the board first\\)$`),
    );
    // --reviewers 1 gives the team one; a live reviewer elsewhere on the board covers it.
    expect(names(startingTeam(project, roleCounts({ reviewers: '1' }), { strict: true, say: () => undefined }))).toEqual(['ana:analyst', 'bob:engineer', 'reviewer:reviewer']);
    expect(names(startingTeam(project, [], { strict: true, say: () => undefined, covered: (role) => role === 'reviewer' }))).toEqual(['ana:analyst', 'bob:engineer']);
    const said: string[] = [];
    startingTeam(project, [], { strict: false, say: (line) => said.push(line) });
    expect(said).toEqual([]);
    expect(project.warnings).toEqual([expect.stringMatching(/^stages\.review: no teammate in team has the role 'reviewer'/)]);
  });

  it('a run that starts past a stage needs no one for it: only the stages its pipelines can reach (sent back included) need a role', () => {
    const project = { stages: {} };
    const noAnalyst = roleCounts({ analysts: '0' });
    expect(names(startingTeam(project, noAnalyst, { strict: true, say: () => undefined, from: 'implementation' }))).toEqual(['engineer:engineer', 'reviewer:reviewer']);
    expect(() => startingTeam(project, noAnalyst, { strict: true, say: () => undefined })).toThrow(/^--analysts: no analyst on this team/);
    // A review sends work back to implementation: still needed when starting there.
    expect(() => startingTeam(project, roleCounts({ engineers: '0' }), { strict: true, say: () => undefined, from: 'implementation' })).toThrow(/^--engineers: no engineer/);
    expect(StageRegistry.from().reachable('review').map((stage) => stage.stage)).toEqual(['review', 'implementation']);
  });

  it.each([
    ['-1', /^--engineers: '-1' is not a number of teammates: a whole number from 0 to 32$/],
    ['1.5', /^--engineers: '1\.5' is not a number of teammates/],
    ['two', /^--engineers: 'two' is not a number of teammates/],
    ['33', /^--engineers: 33 is more than 32 teammates of one role$/],
  ])('refuses --engineers %s, naming the flag', (value, message) => {
    expect(() => parseRoleCount('--engineers', value)).toThrow(message);
  });

  it('reads team[].count from autoteam.config.json, naming the key when it is wrong', () => {
    const dir = folder();
    const write = (team: unknown) => fs.writeFileSync(path.join(dir, 'autoteam.config.json'), JSON.stringify({ team }));
    write([{ name: 'analyst', role: 'analyst' }, { name: 'engineer', role: 'engineer', count: 3 }, { name: 'reviewer', role: 'reviewer', count: 0 }]);
    const project = loadProjectConfig(dir);
    expect(project.team).toEqual([{ name: 'analyst', role: 'analyst' }, { name: 'engineer', role: 'engineer', count: 3 }, { name: 'reviewer', role: 'reviewer', count: 0 }]);
    expect(names(sizeTeam(project.team!, []).members)).toEqual(['analyst:analyst', 'engineer:engineer', 'engineer-2:engineer', 'engineer-3:engineer']);
    // A count of 0 that leaves a stage without anyone is named with the file, as every mistake in it is.
    const said: string[] = [];
    startingTeam(project, [], { strict: false, say: (line) => said.push(line) });
    expect(said).toEqual([`${path.join(dir, 'autoteam.config.json')}: team.2.count: no reviewer on this team, so reviewer tasks wait until one joins (autoteam worker --role reviewer)`]);
    expect(() => startingTeam(project, [], { strict: true, say: () => undefined })).toThrow(`${path.join(dir, 'autoteam.config.json')}: team.2.count: no reviewer on this team, and a run waits`);
    for (const [count, message] of [[-1, /team\.0\.count: a whole number of teammates, 0 to 32/], [2.5, /team\.0\.count: a whole number of teammates/], ['two', /team\.0\.count: a whole number of teammates, 0 to 32/], [40, /team\.0\.count: at most 32 teammates/]] as const) {
      write([{ name: 'engineer', role: 'engineer', count }]);
      expect(() => loadProjectConfig(dir), String(count)).toThrow(message);
    }
    // The bound is a role's, as the flags': two members of one role count together, and the member past it is named, once.
    write([{ name: 'dev', role: 'engineer', count: 20 }, { name: 'analyst', role: 'analyst', count: 32 }, { name: 'eng', role: 'engineer', count: 20 }]);
    expect(() => loadProjectConfig(dir)).toThrow(/: team\.2\.count: at most 32 teammates of one role: the members of role engineer up to this one start 40$/);
    write([{ name: 'dev', role: 'engineer', count: 40 }]);
    expect(() => loadProjectConfig(dir)).toThrow(/: team\.0\.count: at most 32 teammates of one role$/);
  });
});

describe('the requirements of run and post', () => {
  it('takes each argument as one, then the lines of --file without blanks and # comments', () => {
    const file = path.join(folder(), 'reqs.txt');
    fs.writeFileSync(file, '# this week\nWrite a word counter.\n\n   \nWrite a CSV merger.  \r\n# done\n');
    expect(requirementsFrom(['Organize my Downloads.'], file)).toEqual(['Organize my Downloads.', 'Write a word counter.', 'Write a CSV merger.']);
  });

  it('takes the files of a repeated --file in turn, and refuses one that is not text or holds a line too large, naming it', () => {
    const dir = folder();
    const [a, b] = [path.join(dir, 'a.txt'), path.join(dir, 'b.txt')];
    fs.writeFileSync(a, 'Write a word counter.\n');
    fs.writeFileSync(b, 'Write a CSV merger.\nWrite a log filter.\n');
    expect(requirementsFrom(['Organize my Downloads.'], [a, b])).toEqual(['Organize my Downloads.', 'Write a word counter.', 'Write a CSV merger.', 'Write a log filter.']);
    // Through the option as the commands declare it: given twice, both files.
    const command = new Command().exitOverride().addOption(requirementsFileOption()).action(() => undefined);
    command.parse(['--file', a, '--file', b], { from: 'user' });
    expect(requirementsFrom([], command.opts().file)).toEqual(['Write a word counter.', 'Write a CSV merger.', 'Write a log filter.']);
    const missing = path.join(dir, 'nope.txt');
    expect(() => requirementsFrom([], [a, missing])).toThrow(`--file ${missing}: no such file`);

    const binary = path.join(dir, 'image.png');
    fs.writeFileSync(binary, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0xff, 0xfe]));
    expect(() => requirementsFrom([], binary)).toThrow(`--file ${binary}: not a text file`);
    const latin1 = path.join(dir, 'latin1.txt');
    fs.writeFileSync(latin1, Buffer.from('Write a caf\xe9 menu.\n', 'latin1'));
    expect(() => requirementsFrom([], latin1)).toThrow(`--file ${latin1}: not a text file`);
    const big = path.join(dir, 'big.txt');
    fs.writeFileSync(big, `Write a word counter.\n\n${'x'.repeat(110 * 1024)}\n`);
    expect(() => requirementsFrom([], big)).toThrow(`--file ${big}, line 3: a requirement is at most 100 KB (this one is 110 KB)`);
  });

  it('refuses what is no list of requirements: past 4 MB (a device that never ends, a log) or past 1,000 of them', () => {
    expect(() => requirementsFrom([], '/dev/zero')).toThrow('--file /dev/zero: over 4 MB, which is no list of requirements (one a line, at most 1,000)');
    const dir = folder();
    const log = path.join(dir, 'access.log');
    fs.writeFileSync(log, 'GET /index.html 200\n'.repeat(250_000));
    expect(() => requirementsFrom([], log)).toThrow(`--file ${log}: over 4 MB`);
    const many = path.join(dir, 'many.txt');
    fs.writeFileSync(many, Array.from({ length: 1_000 }, (_, i) => `Write tool number ${i}.`).join('\n'));
    expect(requirementsFrom([], many)).toHaveLength(1_000);
    expect(() => requirementsFrom(['Write one more.'], many)).toThrow(`--file ${many}: 1,001 requirements given with it; one command posts at most 1,000 (each is a pipeline): split the file`);
  });

  it('says which requirement repeats which, by argument or file line, in any case and spacing, with or without a full stop, and keeps both', () => {
    const file = path.join(folder(), 'reqs.txt');
    fs.writeFileSync(file, 'Write a CSV merger.\n# again\nwrite a  word counter\nWrite a CSV merger.\n');
    const notes: string[] = [];
    expect(requirementsFrom(['Write a word counter.', 'Organize my Downloads.'], file, undefined, (line) => notes.push(line))).toHaveLength(5);
    expect(notes).toEqual([
      `note: ${file} line 3 repeats requirement 1: it becomes a pipeline of its own, worked again`,
      `note: ${file} line 4 repeats ${file} line 1: it becomes a pipeline of its own, worked again`,
    ]);
    // Files are named as given: two reqs.txt of two folders are told apart.
    const other = path.join(folder(), 'reqs.txt');
    fs.writeFileSync(other, 'Write a word counter\n');
    notes.length = 0;
    requirementsFrom([], [file, other], undefined, (line) => notes.push(line));
    expect(notes.at(-1)).toBe(`note: ${other} line 1 repeats ${file} line 3: it becomes a pipeline of its own, worked again`);
    // One file given twice would post each of its requirements twice: refused.
    expect(() => requirementsFrom([], [file, path.relative(process.cwd(), file)])).toThrow(`--file ${path.relative(process.cwd(), file)} is given more than once: each of its requirements would be posted twice`);
  });

  it('refuses a missing or empty file, naming it, and no requirement at all', () => {
    const dir = folder();
    const missing = path.join(dir, 'nope.txt');
    expect(() => requirementsFrom([], missing)).toThrow(`--file ${missing}: no such file`);
    const empty = path.join(dir, 'empty.txt');
    fs.writeFileSync(empty, '# only a comment\n\n');
    expect(() => requirementsFrom(['x'], empty)).toThrow(`--file ${empty}: no requirement in it`);
    expect(() => requirementsFrom([], undefined)).toThrow(/missing required argument 'requirement'/);
    // Which one is empty, when several are given (a variable that was not set).
    expect(() => requirementsFrom(['Organize my Downloads.', ' '], undefined)).toThrow('a requirement cannot be empty: requirement 2 of the 2 given is blank');
    expect(() => requirementsFrom([''], undefined)).toThrow(/^a requirement cannot be empty$/);
    // Zero-width characters alone are blank too: refused as an argument, skipped as a line of a file.
    expect(() => requirementsFrom(['\u200B\u2060'], undefined)).toThrow(/^a requirement cannot be empty$/);
    const invisible = path.join(dir, 'invisible.txt');
    fs.writeFileSync(invisible, 'Organize my Downloads.\n\u200B\n\u200B# a comment after an invisible space\n');
    expect(requirementsFrom([], invisible)).toEqual(['Organize my Downloads.']);
  });

  it('refuses text that is not UTF-8, in an argument (bytes read as U+FFFD) or a file, naming which one and which line', () => {
    expect(() => requirementsFrom(['Organize my Downloads.', 'caf\uFFFD'], undefined)).toThrow(
      'requirement 2 of the 2 given: a requirement must be UTF-8 text: this one holds bytes that are not (shown as �; is the terminal set to UTF-8?)',
    );
    const file = path.join(folder(), 'latin1.txt');
    fs.writeFileSync(file, Buffer.concat([Buffer.from('Organize my Downloads.\nCount the words in a '), Buffer.from([0x63, 0x61, 0x66, 0xe9]), Buffer.from('.\n')]));
    expect(() => requirementsFrom([], file)).toThrow(`--file ${file}: not a text file (requirements are lines of UTF-8 text; line 2 is not)`);
  });

  it('sums several pipelines in one overall line', () => {
    const printed: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((line: unknown) => void printed.push(String(line)));
    const summary = (status: string, calls: number, cost: number | null) => ({ status, usage: { calls, inputTokens: 0, outputTokens: 0 }, tokens: { input: 1_000 * calls, output: 10 * calls, cacheRead: 0 }, cost }) as unknown as RunSummary;
    try {
      printOverall([summary('approved', 5, 0.5), summary('failed', 3, 0.25)], 61_000, 'claude-sonnet-4-5');
      printOverall([summary('approved', 1, null), summary('approved', 1, 1)], 1_000, 'offline scripted model');
      printOverall([summary('approved', 1, null), summary('failed', 0, null)], 1_000, 'offline scripted model');
    } finally {
      vi.restoreAllMocks();
    }
    expect(printed.filter(Boolean)).toEqual([
      expect.stringMatching(/^overall: 2 pipelines · 1 approved, 1 not · 8 model calls · tokens 8,000 in \/ 80 out · \$0\.750 · wall time 1 min 1 s · claude-sonnet-4-5$/),
      expect.stringMatching(/^overall: 2 pipelines · 2 approved, 0 not · 2 model calls · tokens 2,000 in \/ 20 out · wall time .* · offline scripted model$/),
      expect.stringMatching(/^overall: 2 pipelines · 1 approved, 1 not · 1 model call · tokens 1,000 in \/ 10 out · wall time .* · offline scripted model$/),
    ]);
  });

  it("a pipeline the run stopped keeps the stop's reason, unless it ended on its own while the team stopped", () => {
    const stop = "standard input ended with analyst's question for pipeline #1 unanswered; pipeline #2 is left open on the board";
    const state = (status: PipelineState['status'], reason?: string) => ({ id: 2, status, tasks: [], revisions: 0, usage: { calls: 0, inputTokens: 0, outputTokens: 0 }, ...(reason ? { reason } : {}) }) as PipelineState;
    // The engineer failed its task while the team was stopping: the summary says so, not "left open".
    expect(endOfStopped(state('failed', 'Pipeline #2 failed at implementation #3: out of repertoire'), stop)).toMatchObject({ status: 'failed', reason: 'Pipeline #2 failed at implementation #3: out of repertoire' });
    expect(endOfStopped(state('approved', 'Pipeline #2 approved: 2 criteria met'), stop)).toMatchObject({ status: 'approved', reason: 'Pipeline #2 approved: 2 criteria met' });
    // Still active (left open), or cancelled by the run's timeout: the run's reason.
    expect(endOfStopped(state('active'), stop)).toMatchObject({ status: 'active', reason: stop });
    expect(endOfStopped(state('cancelled', 'cancelled by lead: autoteam run timed out after 3.0 s'), 'timed out after 3.0 s; pipeline #2 cancelled')).toMatchObject({ status: 'cancelled', reason: 'timed out after 3.0 s; pipeline #2 cancelled' });
  });

  it('a merged pipeline points at the base branch, not its removed worktree; a change already there says so; a folder not on this machine is not pointed at', () => {
    const printed: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((line: unknown) => void printed.push(String(line)));
    const worktree = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-summary-worktree-'));
    const base = { pipeline: 1, status: 'approved', requirement: 'r', model: 'm', tasks: [], requirements: 1, questions: 0, files: ['wc.py'], workspace: worktree, revisions: 0, criteria: [], checks: { run: 1, passed: 1 }, usage: { calls: 3, inputTokens: 0, outputTokens: 0 }, retries: 0, behaviour: [], tokens: { input: 0, output: 0, cacheRead: 0 }, cost: null, wallMs: 1_000 };
    const git = { repo: '/repo', branch: 'autoteam/1-wc', base: 'a'.repeat(40) };
    try {
      printSummary({ ...base, git: { ...git, commit: 'b'.repeat(40) } } as RunSummary, [], null);
      printSummary({ ...base, git: { ...git, commit: 'b'.repeat(40), merged: { into: 'main', commit: 'b'.repeat(40) } } } as RunSummary, [], null);
      printSummary({ ...base, git: { ...git, commit: 'c'.repeat(40), merged: { into: 'main', commit: 'c'.repeat(40), noChange: true } } } as RunSummary, [], null);
      // Worked by another machine's teammates on a shared board: its folder is theirs.
      printSummary({ ...base, workspace: path.join(worktree, 'elsewhere', '1') } as RunSummary, [], null);
    } finally {
      vi.restoreAllMocks();
      fs.rmSync(worktree, { recursive: true, force: true });
    }
    const lines = (prefix: string) => printed.filter((line) => line.startsWith(prefix));
    expect(lines('requirements:')).toEqual([
      expect.stringContaining(`files: wc.py (${worktree})`),
      expect.stringContaining('files: wc.py (merged into main)'),
      expect.stringContaining('files: wc.py (merged into main)'),
      expect.stringContaining(`files: wc.py (worked in another folder: ${path.join(worktree, 'elsewhere', '1')} is not on this machine)`),
    ]);
    // Under several pipelines (no model label), each names its requirement.
    expect(lines('  requirement:')).toEqual(['  requirement: r', '  requirement: r', '  requirement: r', '  requirement: r']);
    expect(lines('branch:')).toEqual([
      `branch: autoteam/1-wc from aaaaaaaaaaaa · commit bbbbbbbbbbbb (autoteam diff|merge|discard 1)`,
      `branch: autoteam/1-wc from aaaaaaaaaaaa · commit bbbbbbbbbbbb · merged into main at bbbbbbbbbbbb`,
      `branch: autoteam/1-wc from aaaaaaaaaaaa · its change was already in main at cccccccccccc`,
    ]);
  });
});
