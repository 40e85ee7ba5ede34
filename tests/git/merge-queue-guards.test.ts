/**
 * The merge queue runs, on a pipeline's tree, the checks of the pipelines merged into the base since it
 * began that changed the same files: real git, a real file board and Pipeline, real sandboxed checks.
 */
import { describe, expect, it } from 'vitest';
import { pipelineStatus } from '../../src/core/stages/pipeline-status.js';
import { commitFile, git, setup } from '../helpers/merge-queue-setup.js';

const folders = (names: string[]) => `"""The folders files are sorted into."""\nFOLDERS = ${JSON.stringify(names)}\n`;
const holds = (name: string) => ['import os, sys', 'sys.path.insert(0, os.getcwd())', 'import org', `assert ${JSON.stringify(name)} in org.FOLDERS, f"FOLDERS is {org.FOLDERS}"`, ''].join('\n');

describe('the merge queue, after a conflict between two pipelines', () => {
  it("sends back a revision that settled the conflict by dropping the merged pipeline's lines (its own checks pass, the other's fail on its tree); keeping both merges", { timeout: 120_000 }, async () => {
    const { repo, board, queue, post, work, steps } = await setup();
    const first = await post('org.py', folders(['Images', 'Documents']), holds('Images'));
    const second = await post('org.py', folders(['Pictures', 'Misc']), holds('Pictures'));
    const [one, two] = await queue().drain();
    expect(one).toMatch(new RegExp(`^pipeline #${first}: .* merged into main`));
    expect(two).toMatch(new RegExp(`^pipeline #${second}: not merged — conflict with main in org.py; sent back`));
    const tip = git(repo, 'rev-parse', 'main');
    const latest = () => board.tasks.list().filter((task) => task.pipeline === second).at(-1)!;

    // The revision keeps its own side only: the reviewer's checks, all of them its own, pass.
    await work(latest(), 'org.py', folders(['Pictures', 'Misc']), holds('Pictures'));
    const [dropped] = await queue().drain();
    expect(dropped).toMatch(new RegExp(`^pipeline #${second}: not merged — pipeline #${first}'s check CHK1 fails with this change onto main; sent back to implementation as revision 2 \\(#\\d+\\)`));
    expect(git(repo, 'rev-parse', 'main')).toBe(tip);
    expect(git(repo, 'status', '--porcelain')).toBe('');
    expect(pipelineStatus(board.tasks.list().filter((task) => task.pipeline === second))).toBe('active');
    const issue = latest().artifacts.issues![0]!;
    expect(issue.severity).toBe('blocker');
    expect(issue.text).toMatch(new RegExp(`pipeline #${first}'s check CHK1 fails with this change: pipeline #${first} was merged into main since this pipeline began, changing org.py too.*FOLDERS is \\['Pictures', 'Misc'\\]`, 's'));
    // Already on the tip: no rebase, so only the guard's checks ran.
    expect((await steps(second)).slice(-4)).toEqual(['queued', 'rebased', 'checked', 'sent_back']);

    await work(latest(), 'org.py', folders(['Images', 'Documents', 'Pictures', 'Misc']), holds('Pictures'));
    const [kept] = await queue().drain();
    expect(kept).toMatch(new RegExp(`^pipeline #${second}: .* merged into main \\(fast-forward to [0-9a-f]{12}\\)`));
    await board.sink.flush();
    const checked = (await board.log.read({ pipeline: second, types: ['merge_step'] })).filter((event) => event.type === 'merge_step' && event.step === 'checked').at(-1);
    expect(checked).toMatchObject({ detail: `pipeline #${first}'s CHK1, pipeline #${first}'s tests of org.py pass on the reviewed tree` });
  });

  it("does not blame a pipeline for a guard's check that fails on the base's tip too (the person changed what it checked since): it merges", { timeout: 120_000 }, async () => {
    const { repo, board, pipelines, queue, post, work, steps } = await setup();
    const org = (folders: string[], limit: number) => `"""Folders."""\nFOLDERS = ${JSON.stringify(folders)}\n\n\n\nLIMIT = ${limit}\n`;
    commitFile(repo, 'org.py', org([], 1), 'org.py');
    // Both begin here; the first changes FOLDERS, the second LIMIT, lines apart: no conflict.
    const first = await post('org.py', org(['Images'], 1), holds('Images'));
    const second = await pipelines.post('Raise the limit.', { startStage: 'implementation' });
    expect((await queue().drain())[0]).toMatch(new RegExp(`^pipeline #${first}: .* merged into main`));
    // The person then takes Images out on main: the first's check fails on main's tip, whatever comes next.
    commitFile(repo, 'org.py', org([], 1), 'no Images after all');
    await work(second, 'org.py', org([], 2), ['import os, sys', 'sys.path.insert(0, os.getcwd())', 'import org', 'assert org.LIMIT == 2', ''].join('\n'));
    const [line] = await queue().drain();
    expect(line).toMatch(new RegExp(`^pipeline #${second.pipeline}: .* merged into main \\(fast-forward to [0-9a-f]{12}\\)`));
    await board.sink.flush();
    const checked = (await board.log.read({ pipeline: second.pipeline!, types: ['merge_step'] })).find((event) => event.type === 'merge_step' && event.step === 'checked');
    expect(checked).toMatchObject({ detail: expect.stringContaining(`pipeline #${first}'s check CHK1 (which fails on the base's tip too)`) });
    expect(await steps(second.pipeline!)).toEqual(['queued', 'rebased', 'checked', 'merged']);
    expect(git(repo, 'show', 'main:org.py')).toBe(org([], 2).trimEnd());
  });

  it('leaves alone the checks of a pipeline merged before this one began, and of one that changed other files', { timeout: 120_000 }, async () => {
    const { repo, board, queue, post, steps } = await setup();
    const before = await post('org.py', folders(['Images']), holds('Images'));
    expect((await queue().drain())[0]).toMatch(new RegExp(`^pipeline #${before}: .* merged into main`));
    // Begun after `before` merged: its tree held that change from the start, and drops it.
    // Its check also fails wherever other.py stands: on `elsewhere`'s tree, were it run there.
    const later = await post('org.py', folders(['Pictures']), `${holds('Pictures')}assert not os.path.exists("other.py")\n`);
    const elsewhere = await post('other.py', '"""Other."""\n', 'import os\nassert os.path.exists("other.py")\n');
    const lines = await queue().drain();
    expect(lines).toEqual([expect.stringMatching(new RegExp(`^pipeline #${later}: .* merged into main`)), expect.stringMatching(new RegExp(`^pipeline #${elsewhere}: .* merged into main`))]);
    expect(git(repo, 'show', 'main:org.py')).toContain('FOLDERS = ["Pictures"]');
    // `later` went first, on the tip it began from: nothing to check again.
    expect(await steps(later)).toEqual(['queued', 'rebased', 'merged']);
    expect(board.tasks.list().filter((task) => task.artifacts.outcome?.action === 'merged')).toHaveLength(3);
  });
});
