/**
 * The workspace's escape tests, run again against a real git worktree: relative paths only, no `..`
 * out, no symlink out, and `.git` (the worktree's link to the person's repository) off limits to the
 * file tools; under bubblewrap, executed code can neither rewrite `.git` nor see the repository.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { containment, DEFAULT_LIMITS, Sandbox } from '../../src/core/exec/sandbox.js';
import { createWorktree } from '../../src/core/git/worktree.js';
import { bashTool } from '../../src/core/tools/bash.js';
import { editFileTool } from '../../src/core/tools/edit-file.js';
import { readFileTool } from '../../src/core/tools/read-file.js';
import { writeFileTool } from '../../src/core/tools/write-file.js';
import { tempBoard } from '../helpers/pipeline-cli.js';
import type { Task } from '../../src/core/board/schemas.js';
import { call, makeToolContext, type TestContext } from '../tools/context.js';

const bwrap = containment();
let t: TestContext;
let repo = '';
let worktree = '';
let dotGit = '';

beforeAll(async () => {
  repo = tempBoard('autoteam-confine-');
  const env = { ...process.env, GIT_AUTHOR_NAME: 'P', GIT_AUTHOR_EMAIL: 'p@x', GIT_COMMITTER_NAME: 'P', GIT_COMMITTER_EMAIL: 'p@x' };
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: repo });
  fs.writeFileSync(path.join(repo, 'secret.txt'), 'the person\'s file\n');
  execFileSync('git', ['add', '.'], { cwd: repo });
  execFileSync('git', ['commit', '-q', '-m', 'init'], { cwd: repo, env });
  worktree = path.join(repo, '.autoteam', 'worktrees', '1');
  await createWorktree(repo, worktree, 'autoteam/1-test');
  dotGit = fs.readFileSync(path.join(worktree, '.git'), 'utf8');
  t = makeToolContext();
  t.ctx.workspace = worktree;
  t.ctx.sandbox = new Sandbox({ workspace: worktree, hidden: [t.root, repo], network: false, limits: DEFAULT_LIMITS });
});

afterAll(() => {
  t.cleanup();
  fs.rmSync(repo, { recursive: true, force: true });
});

describe('file tools in a worktree', () => {
  it('work on the checked-out files like in any workspace', async () => {
    const read = await call(readFileTool, { path: 'secret.txt' }, t.ctx);
    expect(read.content).toContain("the person's file");
    const write = await call(writeFileTool, { path: 'src/new.py', content: 'print(1)\n' }, t.ctx);
    expect(write.isError).toBeFalsy();
    expect(fs.readFileSync(path.join(worktree, 'src', 'new.py'), 'utf8')).toBe('print(1)\n');
  });

  it.each([
    ['../escape.txt', /leaves the workspace/],
    ['../../../secret.txt', /leaves the workspace/],
    ['<repo>/secret.txt', /absolute path outside the workspace/],
    ['.git', /'\.git' is git's own data/],
    ['.git/config', /'\.git' is git's own data/],
    ['sub/../.git', /'\.git' is git's own data/],
    ['.GIT', /'\.git' is git's own data/],
  ])('write_file %s is refused, and nothing is written', async (target, why) => {
    const outcome = await call(writeFileTool, { path: target.replace('<repo>', repo), content: 'gitdir: /tmp/elsewhere\n' }, t.ctx);
    expect(outcome.isError).toBe(true);
    expect(outcome.content).toMatch(why);
    expect(fs.readFileSync(path.join(worktree, '.git'), 'utf8')).toBe(dotGit);
    expect(fs.readFileSync(path.join(repo, 'secret.txt'), 'utf8')).toBe("the person's file\n");
  });

  it('a symlink to .git or out of the worktree is refused by read, write and edit', async () => {
    fs.symlinkSync('.git', path.join(worktree, 'g'));
    fs.symlinkSync(repo, path.join(worktree, 'up'));
    for (const target of ['g', 'up/secret.txt', 'up/.git/config']) {
      for (const outcome of [
        await call(readFileTool, { path: target }, t.ctx),
        await call(writeFileTool, { path: target, content: 'x' }, t.ctx),
        await call(editFileTool, { path: target, old_text: 'a', new_text: 'b' }, t.ctx),
      ]) {
        expect(outcome.isError, `${target}: ${outcome.content}`).toBe(true);
        expect(outcome.content).toMatch(/refused path/);
      }
    }
    expect(fs.readFileSync(path.join(worktree, '.git'), 'utf8')).toBe(dotGit);
    fs.rmSync(path.join(worktree, 'g'));
    fs.rmSync(path.join(worktree, 'up'));
  });
});

describe.runIf(bwrap.kind === 'bwrap')('executed code in a worktree (bubblewrap)', () => {
  it('cannot rewrite .git, cannot reach the repository, and git inside finds no repository', async () => {
    const outcome = await call(
      bashTool,
      {
        command: [
          'echo "gitdir: /tmp/x" > .git && echo WROTE-GIT',
          `cat ${JSON.stringify(path.join(repo, 'secret.txt'))} && echo READ-REPO`,
          `ls -A ${JSON.stringify(path.join(repo, '.git'))} | head -3`,
          'git status 2>&1 | head -1',
          'echo made > ok.txt && echo WROTE-WORKTREE',
        ].join('; '),
      },
      t.ctx,
    );
    expect(outcome.content).not.toContain('WROTE-GIT');
    expect(outcome.content).not.toContain('READ-REPO');
    expect(outcome.content).toMatch(/not a git repository/i);
    expect(outcome.content).toContain('WROTE-WORKTREE');
    expect(fs.readFileSync(path.join(worktree, '.git'), 'utf8')).toBe(dotGit);
    expect(fs.readFileSync(path.join(worktree, 'ok.txt'), 'utf8')).toBe('made\n');
  });
});

describe('review tools on a branch', () => {
  it('with no file named, lint and analyze the submitted file and the changed ones; the gate finds the submitted file among them', async () => {
    const { approvalGaps } = await import('../../src/core/stages/verdicts.js');
    const { worktreeChange } = await import('../../src/core/git/worktree.js');
    const { runLinterTool } = await import('../../src/core/tools/run-linter.js');
    const { analyzeComplexityTool } = await import('../../src/core/tools/analyze-complexity.js');
    fs.writeFileSync(path.join(worktree, 'main.py'), '"""Main."""\nfrom helper import value\nprint(value())\n');
    fs.writeFileSync(path.join(worktree, 'helper.py'), 'def value():\n    return 1\n');
    fs.writeFileSync(path.join(worktree, 'notes.md'), 'not code\n');
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: worktree, encoding: 'utf8' }).trim();
    const change = await worktreeChange(worktree, head);
    const sha = (await import('../../src/core/tools/files-artifact.js')).workspaceFileSha(worktree, 'main.py')!;
    t.ctx.task = { artifacts: { submitted: { file: 'main.py', sha256: sha, revision: 0 }, change } } as unknown as Task;
    const lint = await call(runLinterTool, {}, t.ctx);
    expect(lint.content).toMatch(/^main\.py: no problems/m);
    expect(lint.content).toMatch(/^helper\.py: 1 problem/m);
    expect(lint.content).not.toMatch(/notes\.md/);
    const stored = t.artifacts().lint!;
    expect(stored.file).toBe('main.py');
    expect(stored.ok).toBe(false);
    expect(Object.keys(stored.shas ?? {}).sort()).toEqual(['helper.py', 'main.py', 'src/new.py'].filter((f) => change.files.some((c) => c.path === f)).sort());
    const complexity = await call(analyzeComplexityTool, { files: ['helper.py'] }, t.ctx);
    expect(complexity.content).toMatch(/^helper\.py: 1 function/m);
    // run_linter covered main.py at the submitted sha: no lint gap (run_tests was not run: that gap stays).
    const gaps = approvalGaps({ ...t.artifacts(), submitted: { file: 'main.py', sha256: sha, revision: 0 } }, []);
    expect(gaps.some((gap) => gap.startsWith('run_linter'))).toBe(false);
    expect(gaps).toContain('run_tests has not been run in this review');
    t.ctx.task = null;
  });

  it("run_tests runs the repository's own tests (a tests/ folder), once, and fails when they fail", async () => {
    const { runTestsTool } = await import('../../src/core/tools/run-tests.js');
    fs.mkdirSync(path.join(worktree, 'tests'), { recursive: true });
    fs.writeFileSync(path.join(worktree, 'tests', 'test_value.py'), 'import unittest\nfrom helper import value\n\nclass T(unittest.TestCase):\n    def test_value(self):\n        self.assertEqual(value(), 1)\n');
    t.ctx.task = { artifacts: { git: { repo, branch: 'autoteam/1-test', base: 'x', worktree }, submitted: { file: 'helper.py', sha256: '', revision: 0 } } } as unknown as Task;
    const passing = await call(runTestsTool, {}, t.ctx);
    expect(passing.content).toMatch(/^helper\.py: PASS \(the project's tests: python3 -m (pytest -q tests|unittest discover -s tests -t \. -v)/m);
    fs.writeFileSync(path.join(worktree, 'helper.py'), 'def value():\n    return 2\n');
    const failing = await call(runTestsTool, {}, t.ctx);
    expect(failing.content).toMatch(/^helper\.py: FAIL \(the project's tests/m);
    expect(t.artifacts().tests?.ok).toBe(false);
    t.ctx.task = null;
  });
});

describe('submit_for_review on a worktree', () => {
  it("says which files a rule of this machine ignores, so the approval will not commit them; the repository's own .gitignore is not said", async () => {
    const { submitForReviewTool } = await import('../../src/core/tools/submit-for-review.js');
    const base = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: worktree, encoding: 'utf8' }).trim();
    fs.appendFileSync(path.join(repo, '.git', 'info', 'exclude'), 'test_count.py\n');
    fs.writeFileSync(path.join(worktree, '.gitignore'), 'build.log\n');
    fs.writeFileSync(path.join(worktree, 'count.py'), 'print(1)\n');
    fs.writeFileSync(path.join(worktree, 'test_count.py'), 'import count\n');
    fs.writeFileSync(path.join(worktree, 'build.log'), 'noise\n');
    t.ctx.task = { id: 1, revision: 0, artifacts: { git: { repo, branch: 'autoteam/1-test', base, worktree } } } as unknown as Task;
    try {
      const outcome = await call(submitForReviewTool, { file: 'count.py' }, t.ctx);
      expect(outcome.content).toBe(`Submitted count.py for review; left out of the change: test_count.py (ignored by ${path.join(repo, '.git', 'info', 'exclude')}, a rule of this machine, not of the repository), so the approval does not commit it.`);
      expect(Object.keys(t.artifacts().submitted?.files ?? {})).not.toContain('test_count.py');
    } finally {
      t.ctx.task = null;
      for (const file of ['.gitignore', 'count.py', 'test_count.py', 'build.log']) fs.rmSync(path.join(worktree, file), { force: true });
    }
  });
});

describe("the project's npm tests", () => {
  it('run only when the worktree has its dependencies (a fresh worktree has no node_modules)', async () => {
    const { projectTestCommand } = await import('../../src/core/exec/test-runner.js');
    const dir = tempBoard('autoteam-npmtest-');
    try {
      fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'x', scripts: { test: 'node -e "process.exit(0)"' } }));
      expect(projectTestCommand(dir)).toBeNull();
      fs.mkdirSync(path.join(dir, 'node_modules'));
      expect(projectTestCommand(dir)).toEqual({ command: 'npm', args: ['test', '--silent'] });
      fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'x', scripts: { test: 'echo "Error: no test specified" && exit 1' } }));
      expect(projectTestCommand(dir)).toBeNull();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
