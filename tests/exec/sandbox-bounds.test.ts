/**
 * What bounds a tool call inside bubblewrap beyond the rlimits: a sized /tmp and /dev/shm with every
 * other tmpfs read-only, a pids cgroup per run (the only process limit root cannot ignore), and a
 * board whose real place stays hidden when its folders are links. Real bwrap, real cgroups, real forks.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadTeammateSettings } from '../../src/core/agent/settings.js';
import { ConfigError } from '../../src/core/errors.js';
import { pidsCandidates, pidsCgroups, type PidsProbe, sweepCgroups } from '../../src/core/exec/pids-cgroup.js';
import { runProcess } from '../../src/core/exec/process.js';
import { containment, DEFAULT_LIMITS, describeContainment, type ResourceLimits, Sandbox } from '../../src/core/exec/sandbox.js';
import { until } from '../helpers/agent-wait.js';

const bwrap = containment();
const pids = pidsCgroups();
const roots: string[] = [];
const cleanups: Array<() => void> = [];
afterAll(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
  for (const root of roots) fs.rmSync(root, { recursive: true, force: true });
});

function tempDir(prefix: string): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  roots.push(dir);
  return dir;
}

/**
 * A folder outside /tmp (and the home directory), both of which the sandbox hides anyway: what a link
 * leads to there is visible unless the sandbox hides it on purpose. Ignored by git (node_modules).
 */
function outsideTmp(prefix: string): string {
  const parent = path.resolve('node_modules', '.cache', 'autoteam-tests');
  fs.mkdirSync(parent, { recursive: true });
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(parent, prefix)));
  roots.push(dir);
  return dir;
}

/** A board root with a workspace inside, as the runtime lays them out. */
function board(): { root: string; workspace: string } {
  const root = tempDir('autoteam-bounds-');
  const workspace = path.join(root, 'workspace', '1');
  fs.mkdirSync(workspace, { recursive: true });
  return { root, workspace };
}

function run(sandbox: Sandbox, command: string, timeoutMs = 30_000) {
  return runProcess('bash', ['-c', command], { cwd: sandbox.workspace, timeoutMs, maxOutputChars: 20_000, sandbox });
}

function sandboxIn(layout: { root: string; workspace: string }, limits: Partial<ResourceLimits> = {}, probe: PidsProbe = pids): Sandbox {
  return new Sandbox({ workspace: layout.workspace, hidden: [layout.root], network: false, limits: { ...DEFAULT_LIMITS, ...limits } }, bwrap, probe);
}

describe.runIf(bwrap.kind === 'bwrap')('the sandbox\'s temporary space', () => {
  it.each(['/tmp', '/dev/shm'])('a write past the size of %s fails, and the tool error names the limit', async (dir) => {
    const sandbox = sandboxIn(board(), { tmpMb: 4 });
    const done = await run(sandbox, `head -c 12000000 /dev/zero > ${dir}/fill; echo status=$?; stat -c %s ${dir}/fill`);
    expect(done.stdout).toMatch(/status=1/);
    expect(Number(done.stdout.trim().split('\n').at(-1))).toBeLessThanOrEqual(4 * 1024 * 1024);
    expect(done.stderr).toMatch(/No space left on device/);
    expect(done.limit).toEqual({ limit: 'tmp size', text: 'the size limit of /tmp and /dev/shm (4 MB each) was hit; write large files to the workspace' });
  });

  it('every other tmpfs — /var/tmp, /run, /dev, the ones over the home directory and the board — is read-only', async () => {
    const layout = board();
    const sandbox = sandboxIn(layout);
    const targets = ['/var/tmp/x', '/run/x', '/dev/x', path.join(os.homedir(), 'x'), path.join(layout.root, 'x'), path.join(layout.root, 'workspace', 'x')];
    const done = await run(sandbox, `${targets.map((file) => `echo 1 > ${file} && echo WROTE ${file}`).join('; ')}; echo made > made.txt; echo end`);
    expect(done.stdout).not.toContain('WROTE');
    expect(done.stderr.match(/Read-only file system/g)).toHaveLength(targets.length);
    // The workspace and /tmp stay writable.
    expect(fs.readFileSync(path.join(layout.workspace, 'made.txt'), 'utf8')).toBe('made\n');
    expect((await run(sandbox, 'echo ok > /tmp/x && cat /tmp/x && echo ok > /dev/shm/y && cat /dev/shm/y')).stdout).toBe('ok\nok');
  });
});

describe('SANDBOX_TMP_MB', () => {
  it('sets the size of /tmp and /dev/shm; a bad value is an error naming the variable', () => {
    expect(loadTeammateSettings({}).sandbox.limits.tmpMb).toBe(256);
    expect(loadTeammateSettings({ SANDBOX_TMP_MB: '64' }).sandbox.limits.tmpMb).toBe(64);
    expect(() => loadTeammateSettings({ SANDBOX_TMP_MB: '1.5G' })).toThrow(new ConfigError("SANDBOX_TMP_MB: '1.5G' is not a whole number (1 or more)"));
    expect(() => loadTeammateSettings({ SANDBOX_TMP_MB: '0' })).toThrow(new ConfigError('SANDBOX_TMP_MB: 0 is too small (at least 1)'));
  });

  it('reaches the bwrap profile as --size before the /tmp and /dev/shm tmpfs', () => {
    const sandbox = new Sandbox({ workspace: board().workspace, hidden: [], network: false, limits: { ...DEFAULT_LIMITS, tmpMb: 64 } }, { kind: 'bwrap', bwrap: '/usr/bin/bwrap', sizedTmp: true }, { kind: 'none', reason: 'test' });
    const { args } = sandbox.command('true', []);
    for (const dir of ['/tmp', '/dev/shm']) expect(args.slice(args.indexOf(dir) - 3, args.indexOf(dir) + 1)).toEqual(['--size', String(64 * 1024 * 1024), '--tmpfs', dir]);
  });
});

describe('describeContainment', () => {
  const box = { kind: 'bwrap' as const, bwrap: '/usr/bin/bwrap', sizedTmp: true };
  it('says when nothing bounds the process count (root, no pids cgroup) or /tmp (bwrap without --size), and nothing when all is bounded', () => {
    expect(describeContainment(box, { kind: 'none', reason: 'no cgroup hierarchy with the pids controller is mounted' }, true)).toBe(
      'sandbox: bubblewrap (/usr/bin/bwrap) — workspace only, no network by default; the process count is NOT limited (running as root, which ignores RLIMIT_NPROC, and no pids cgroup: no cgroup hierarchy with the pids controller is mounted)',
    );
    expect(describeContainment(box, { kind: 'none', reason: 'x' }, false)).toBe('sandbox: bubblewrap (/usr/bin/bwrap) — workspace only, no network by default');
    expect(describeContainment({ ...box, sizedTmp: false }, { kind: 'cgroup', cgroups: { version: 1, base: '/sys/fs/cgroup/pids', namespace: '1' } }, true)).toMatch(
      /no network by default; \/tmp and \/dev\/shm are NOT size-limited \(this bwrap has no --size/,
    );
  });
});

describe('finding a pids hierarchy', () => {
  it('takes a v1 mount naming pids (at this process\'s path in it) and a cgroup2 mount, v2 first', () => {
    const mounts = [
      'cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0',
      'cgroup /sys/fs/cgroup/pids cgroup rw,relatime,pids 0 0',
      'cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0',
    ].join('\n');
    const self = ['8:pids:/build/7', '4:memory:/x', '0::/user.slice'].join('\n');
    expect(pidsCandidates(mounts, self)).toEqual([
      { version: 2, base: '/sys/fs/cgroup/unified/user.slice' },
      { version: 1, base: '/sys/fs/cgroup/pids/build/7' },
    ]);
    // A path outside this namespace's view cannot be reached; no pids mount, no candidate.
    expect(pidsCandidates('cgroup /sys/fs/cgroup/pids cgroup rw,pids 0 0', '3:pids:/../other')).toEqual([]);
    expect(pidsCandidates('cgroup /sys/fs/cgroup/cpu cgroup rw,cpu 0 0', '1:cpu:/')).toEqual([]);
  });
});

describe('a pids cgroup that cannot be made', () => {
  it('fails the run with an error naming it rather than running unbounded', async () => {
    const broken: PidsProbe = { kind: 'cgroup', cgroups: { version: 1, base: path.join(tempDir('autoteam-nocgroup-'), 'missing'), namespace: '1' } };
    const sandbox = new Sandbox({ workspace: board().workspace, hidden: [], network: false, limits: DEFAULT_LIMITS }, { kind: 'none', reason: 'test' }, broken);
    const done = await run(sandbox, 'echo ran');
    expect(done.stdout).toBe('');
    expect(done.error).toMatch(/^cannot make the pids cgroup that bounds the process count: ENOENT.*missing\/autoteam-/);
  });
});

const reaper = () => Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout);

function alive(pattern: string): boolean {
  try {
    execFileSync('pgrep', ['-f', pattern]);
    return true;
  } catch {
    return false;
  }
}

function childCgroups(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
}

if (pids.kind !== 'cgroup') {
  it.skip(`pids cgroup tests: no usable pids cgroup here (${pids.reason})`, () => {});
} else {
  describe('the process limit as a pids cgroup', () => {
    // A parent of our own for the runs of these tests, so that what they leave is theirs alone.
    const base = path.join(pids.cgroups.base, `autoteam-test-${process.pid}-${randomBytes(3).toString('hex')}`);
    const probe: PidsProbe = { kind: 'cgroup', cgroups: { ...pids.cgroups, base } };
    fs.mkdirSync(base);
    cleanups.push(() => fs.rmdirSync(base));

    it.runIf(bwrap.kind === 'bwrap')('stops a fork loop near pids.max even as root, names the limit, and leaves no process or cgroup behind', async () => {
      const tag = `${process.pid % 1000}${randomBytes(2).readUInt16BE()}`;
      const sandbox = sandboxIn(board(), { processes: 40 }, probe);
      const loop = `python3 -c "
import os, sys
n = 0
while True:
    if os.fork() == 0:
        os.execvp('sleep', ['sleep', '300.${tag}'])
    n += 1
    print(n, flush=True)
"`;
      const done = await run(sandbox, loop);
      const started = Number(done.stdout.trim().split('\n').at(-1));
      expect(started, done.stderr).toBeGreaterThan(25);
      expect(started).toBeLessThan(40);
      expect(done.stderr).toMatch(/BlockingIOError|Resource temporarily unavailable/);
      expect(done.limit).toEqual({ limit: 'processes', text: 'the process limit (40 processes and threads) was hit' });
      expect(childCgroups(base)).toEqual([]);
      expect(alive(`sleep 300.${tag}`)).toBe(false);
    });

    it('bounds a run without bubblewrap too, and names the limit when the program carried on', async () => {
      const tag = `${process.pid % 1000}${randomBytes(2).readUInt16BE()}`;
      const sandbox = new Sandbox({ workspace: board().workspace, hidden: [], network: false, limits: { ...DEFAULT_LIMITS, processes: 12 } }, { kind: 'none', reason: 'test' }, probe);
      const loop = `python3 -c "
import subprocess
for n in range(40):
    try:
        subprocess.Popen(['sleep', '302.${tag}'])
    except OSError:
        break
print('started', n, 'and carried on')
"`;
      const done = await run(sandbox, loop);
      expect(done.exitCode, done.stderr).toBe(0);
      expect(done.stdout).toMatch(/^started ([5-9]|1[01]) and carried on$/);
      expect(done.limit).toEqual({ limit: 'processes', text: 'the process limit (12 processes and threads) was hit' });
      expect(childCgroups(base)).toEqual([]);
      expect(alive(`sleep 302.${tag}`)).toBe(false);
    });

    it('the sweep removes the cgroup a dead autoteam process left, killing what runs in it, and keeps a live one\'s', async () => {
      const dead = reaper();
      const ns = pids.cgroups.namespace;
      const left = path.join(base, `autoteam-${dead}-${ns}-0a1b2c3d`);
      const live = path.join(base, `autoteam-${process.ppid}-${ns}-4e5f6a7b`);
      const foreign = path.join(base, `autoteam-${dead}-${Number(ns) + 1}-0a1b2c3d`);
      for (const dir of [left, live, foreign]) fs.mkdirSync(dir);
      cleanups.push(() => {
        for (const dir of [live, foreign]) fs.rmSync(dir, { recursive: false, force: true });
      });
      const tag = `${process.pid % 1000}${randomBytes(2).readUInt16BE()}`;
      const orphan = spawn('/bin/sh', ['-c', 'echo $$ > "$0/cgroup.procs" && exec sleep "$1"', left, `301.${tag}`], { stdio: 'ignore' });
      const gone = new Promise<void>((resolve) => orphan.once('exit', () => resolve()));
      cleanups.push(() => orphan.kill('SIGKILL'));
      // Started and inside its cgroup before the sweep looks.
      await until(() => fs.readFileSync(path.join(left, 'cgroup.procs'), 'utf8').trim() !== '', 'the orphan in its cgroup');
      let removed = sweepCgroups(probe.cgroups);
      await gone;
      // The killed process leaves the cgroup as it exits; a second sweep takes the cgroup if the first found it busy.
      if (removed === 0) removed = sweepCgroups(probe.cgroups);
      expect(removed).toBe(1);
      expect(fs.existsSync(left)).toBe(false);
      expect([live, foreign].map((dir) => fs.existsSync(dir))).toEqual([true, true]);
      for (const dir of [live, foreign]) fs.rmdirSync(dir);
    });
  });
}

describe.runIf(bwrap.kind === 'bwrap')('a board reached through links', () => {
  it('a .tasks, .team or .env that links outside the root is not readable from executed code', async () => {
    const layout = board();
    const elsewhere = outsideTmp('elsewhere-');
    for (const name of ['tasks', 'team']) {
      fs.mkdirSync(path.join(elsewhere, name));
      fs.writeFileSync(path.join(elsewhere, name, 'task_1.json'), `{"board": "${name}"}\n`);
      fs.symlinkSync(path.join(elsewhere, name), path.join(layout.root, `.${name}`));
    }
    fs.writeFileSync(path.join(elsewhere, 'secrets.env'), 'GH_PAT=linked-secret\n');
    fs.symlinkSync(path.join(elsewhere, 'secrets.env'), path.join(layout.root, '.env'));
    const done = await run(sandboxIn(layout), `cat ${elsewhere}/tasks/task_1.json ${elsewhere}/team/task_1.json ${elsewhere}/secrets.env; ls -A ${elsewhere}/tasks; echo end`);
    expect(done.stdout).not.toContain('"board"');
    expect(done.stdout).not.toContain('linked-secret');
    expect(done.stdout).toBe('end');
    expect(fs.readFileSync(path.join(elsewhere, 'tasks', 'task_1.json'), 'utf8')).toContain('"board": "tasks"');
  });

  it('a board root given through a link is hidden at its real path as well, the workspace still writable', async () => {
    const real = { root: outsideTmp('board-'), workspace: '' };
    real.workspace = path.join(real.root, 'workspace', '1');
    fs.mkdirSync(real.workspace, { recursive: true });
    fs.mkdirSync(path.join(real.root, '.tasks'));
    fs.writeFileSync(path.join(real.root, '.tasks', 'task_1.json'), '{"id": 1}\n');
    const link = path.join(outsideTmp('link-'), 'board');
    fs.symlinkSync(real.root, link);
    const workspace = path.join(link, 'workspace', '1');
    const sandbox = new Sandbox({ workspace, hidden: [link], network: false, limits: DEFAULT_LIMITS }, bwrap, pids);
    const done = await run(sandbox, `cat ${real.root}/.tasks/task_1.json ${link}/.tasks/task_1.json; echo made > made.txt; echo end`);
    expect(done.stdout).toBe('end');
    expect(fs.readFileSync(path.join(real.workspace, 'made.txt'), 'utf8')).toBe('made\n');
  });
});
