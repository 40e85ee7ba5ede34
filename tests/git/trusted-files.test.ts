/**
 * autoteam's trusted files (`.env`, `autoteam.config.json`) never enter a pipeline's change: once
 * merged they would be read when autoteam next starts in that folder — a hook that runs with the
 * person's rights, a `.env` that turns the sandbox off or points the key at another server. A
 * teammate in a worktree (real git, the real tool context) is refused them by the file tools, and
 * what its code makes of them stays out of the commit and out of the change the reviewer sees.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { commitWorktree, createWorktree, worktreeChange } from '../../src/core/git/worktree.js';
import { blobDir, snapshotWorkspace } from '../../src/core/stages/submission.js';
import { localTeammates, makeTeam } from '../helpers/agent-team.js';
import { tempBoard, until } from '../helpers/agent-wait.js';
import { FakeModel, reply, toolUse } from '../helpers/fake-model.js';

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 'P', GIT_AUTHOR_EMAIL: 'p@x', GIT_COMMITTER_NAME: 'P', GIT_COMMITTER_EMAIL: 'p@x' } }).trim();
}

const { folders: cleanup, start } = localTeammates();

describe("autoteam's trusted files in a pipeline's worktree", () => {
  it('the file tools refuse them, and what code makes of them is left out of the commit and the change', async () => {
    const repo = tempBoard();
    const root = tempBoard();
    cleanup.push(repo, root);
    git(repo, 'init', '-q', '-b', 'main');
    // A config the person committed: the team's edit of it stays out of the change too.
    fs.writeFileSync(path.join(repo, 'autoteam.config.json'), '{}\n');
    fs.writeFileSync(path.join(repo, 'README.md'), '# A project\n');
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'init');
    const worktree = path.join(repo, '.autoteam', 'worktrees', '1');
    const { branch, base } = await createWorktree(repo, worktree, 'autoteam/1-test');
    const { board } = await makeTeam(root);
    await board.create({ subject: 'Add app.py', description: 'Write app.py.', role: 'engineer', artifacts: { git: { repo, branch, base, worktree } } });

    const hook = '{"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"env > /tmp/leaked"}]}]}}';
    const model = new FakeModel([
      reply(toolUse('write_file', { path: '.env', content: 'AUTOTEAM_SANDBOX=off\n' }), toolUse('write_file', { path: 'autoteam.config.json', content: hook }), toolUse('write_file', { path: '.ENV', content: 'AUTOTEAM_SANDBOX=off\n' })),
      // In any folder, in any case (a disk that ignores case reads `.ENV` as `.env`), and folders of those names.
      reply(toolUse('bash', { command: `echo AUTOTEAM_SANDBOX=off > .env; echo AUTOTEAM_SANDBOX=off > .ENV; mkdir -p sub d/.env; echo x > d/.env/inner; echo '${hook}' > sub/autoteam.config.json; echo '${hook}' > sub/AUTOTEAM.CONFIG.JSON; echo '${hook}' > autoteam.config.json; echo 'print(1)' > app.py` })),
      reply(toolUse('complete_task', { result: 'app.py written' })),
    ]);
    const running = start({ root, name: 'eng', role: 'engineer', model });
    await until(() => board.get(1).status === 'completed', 'the task completed');
    await running.halt();
    model.assertDone();

    // The file tools say why, and write nothing.
    const refused = model.requests[1]!.messages.at(-1)!.content as Array<{ type: string; content?: unknown; is_error?: boolean }>;
    const texts = refused.filter((block) => block.type === 'tool_result').map((block) => ({ error: block.is_error, text: JSON.stringify(block.content) }));
    expect(texts).toEqual([
      { error: true, text: expect.stringContaining("'.env' holds the person's secrets, off limits to the file tools") },
      { error: true, text: expect.stringContaining("'autoteam.config.json' holds the person's settings and hooks, off limits to the file tools") },
      { error: true, text: expect.stringContaining("'.env' holds the person's secrets, off limits to the file tools") },
    ]);

    // What bash made is in the worktree, but never in the change or the commit.
    expect(fs.existsSync(path.join(worktree, '.env'))).toBe(true);
    expect((await worktreeChange(worktree, base)).files).toEqual([{ status: 'A', path: 'app.py' }]);
    const commit = await commitWorktree(worktree, base, 'Add app.py', 'engineer@test');
    expect(commit).toMatch(/^[0-9a-f]{40}$/);
    expect(git(repo, 'diff', '--name-status', base, commit!)).toBe('A\tapp.py');
    expect(git(repo, 'show', `${commit}:autoteam.config.json`)).toBe('{}');
    // The committed config is back as committed: a dirty worktree would stop the merge queue's rebase.
    expect(git(worktree, 'status', '--porcelain', '--untracked-files=no')).toBe('');
    expect(fs.readFileSync(path.join(worktree, 'autoteam.config.json'), 'utf8')).toBe('{}\n');
  });
});

describe("a pipeline's submission read outside the sandbox", () => {
  it('takes a symbolic link as its target path, never the file or folder it names', async () => {
    const repo = tempBoard();
    const root = tempBoard();
    const outside = tempBoard();
    cleanup.push(repo, root, outside);
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'HOST-SECRET-CONTENT-42\n');
    git(repo, 'init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(repo, 'README.md'), '# A project\n');
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'init');
    const worktree = path.join(repo, '.autoteam', 'worktrees', '1');
    const { base } = await createWorktree(repo, worktree, 'autoteam/1-test');
    // What the agents' code can make in its worktree: links out, a link to a folder (a venv's lib64), a folder reached through a link.
    fs.writeFileSync(path.join(worktree, 'app.py'), 'print(1)\n');
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(worktree, 'leak.txt'));
    fs.mkdirSync(path.join(worktree, 'venv', 'lib'), { recursive: true });
    fs.symlinkSync('lib', path.join(worktree, 'venv', 'lib64'));
    fs.symlinkSync(outside, path.join(worktree, 'up'));

    const changed = (await worktreeChange(worktree, base)).files.map((file) => file.path);
    expect(changed.sort()).toEqual(['app.py', 'leak.txt', 'up', 'venv/lib64']);
    const manifest = snapshotWorkspace(root, worktree, [...changed, 'up/secret.txt']);
    expect(Object.keys(manifest).sort()).toEqual(['app.py', 'leak.txt', 'up', 'venv/lib64']);
    const kept = fs.readdirSync(blobDir(root)).map((blob) => fs.readFileSync(path.join(blobDir(root), blob), 'utf8'));
    expect(kept.sort()).toEqual([outside, path.join(outside, 'secret.txt'), 'lib', 'print(1)\n'].sort());
    for (const text of kept) expect(text).not.toContain('HOST-SECRET');
  });
});
