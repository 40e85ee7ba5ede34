import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { runProcess } from '../../src/core/exec/process.js';
import { Launcher, launchProcess, launcherPid, startDirectly, stopLauncher } from '../../src/core/exec/launcher.js';
import { CODE_NICENESS } from '../../src/core/exec/sandbox.js';
import { pidAlive } from '../../src/core/board/pid.js';
import { until } from '../helpers/agent-wait.js';

const base = { cwd: os.tmpdir(), timeoutMs: 20_000, maxOutputChars: 10_000 };

function parentOf(result: { stdout: string }): number {
  return Number(result.stdout.trim());
}

afterEach(() => startDirectly(false));

describe('the thread\'s process launcher', () => {
  it('starts every process of the thread: one long-lived launcher is the parent of each, not this process', async () => {
    const first = await runProcess('bash', ['-c', 'echo $PPID'], base);
    const second = await runProcess('bash', ['-c', 'echo $PPID'], base);
    const launcher = launcherPid();
    expect(launcher).toBeGreaterThan(0);
    expect(parentOf(first)).toBe(launcher);
    expect(parentOf(second)).toBe(launcher);
    expect(launcher).not.toBe(process.pid);
    // It runs with the allow-listed environment, whatever this process holds.
    const environ = fs.readFileSync(`/proc/${launcher}/environ`, 'utf8').split('\0').map((entry) => entry.split('=')[0]);
    expect(environ.filter((name): name is string => Boolean(name)).every((name) => /^(PATH|LANG|LANGUAGE|LC_[A-Z_]+|TERM|TZ|COLUMNS|LINES)$/.test(name))).toBe(true);
  });

  it.runIf(fs.existsSync('/proc/self/autogroup'))('keeps the agents\' code apart: its launcher\'s session runs below the runtime\'s, the runtime\'s own programs at its priority', async () => {
    const own = await runProcess('bash', ['-c', 'echo $PPID; cat /proc/self/autogroup'], base);
    const code = await launchProcess({ argv: ['bash', '-c', 'echo $PPID; cat /proc/self/autogroup'], cwd: os.tmpdir(), env: { PATH: process.env.PATH! }, maxBuffer: 10_000, niceness: CODE_NICENESS });
    const [codeParent, codeGroup] = (await code.outcome).stdout.split('\n');
    const [ownParent, ownGroup] = own.stdout.split('\n');
    expect(Number(ownParent)).toBe(launcherPid());
    expect(Number(codeParent)).toBe(launcherPid(CODE_NICENESS));
    expect(launcherPid(CODE_NICENESS)).not.toBe(launcherPid());
    // Each run is a process group inside its launcher's session, which is not this process's.
    expect(ownGroup).toMatch(/ nice 0$/);
    expect(codeGroup).toMatch(new RegExp(` nice ${CODE_NICENESS}$`));
    expect(codeGroup!.split(' ')[0]).not.toBe(fs.readFileSync('/proc/self/autogroup', 'utf8').split(' ')[0]);
    // stopLauncher lets both go.
    const launchers = [launcherPid()!, launcherPid(CODE_NICENESS)!];
    stopLauncher();
    await until(() => launchers.every((pid) => !pidAlive(pid)), 'both launchers to exit');
  });

  it('is let go when the thread settles into idle (stopLauncher), and the next run starts another', async () => {
    await runProcess('true', [], base);
    const before = launcherPid()!;
    stopLauncher();
    await until(() => !pidAlive(before), 'the released launcher to exit');
    const after = await runProcess('bash', ['-c', 'echo $PPID'], base);
    expect(parentOf(after)).toBe(launcherPid());
    expect(parentOf(after)).not.toBe(before);
  });

  it('a launcher killed from outside ends its runs (their processes killed too), and the next run starts another', async () => {
    const mark = `sleep 3600.${process.pid}${Math.floor(Math.random() * 1e6)}`;
    const running = runProcess('bash', ['-c', `echo started; ${mark}`], base);
    const launcher = await until(() => launcherPid(), 'a launcher');
    await until(() => execFileSync('pgrep', ['-f', `^${mark}`], { encoding: 'utf8' }), 'the run to start');
    process.kill(launcher, 'SIGKILL');
    const result = await running;
    expect(result).toMatchObject({ exitCode: null, signal: 'SIGKILL', timedOut: false });
    expect(result.stderr).toMatch(/the process launcher was killed under this run/);
    await until(() => { try { execFileSync('pgrep', ['-f', `^${mark}`]); return false; } catch { return true; } }, 'the orphaned run to be killed');
    const next = await runProcess('bash', ['-c', 'echo $PPID'], base);
    expect(next.exitCode).toBe(0);
    expect(parentOf(next)).not.toBe(launcher);
  });

  it('dies with the thread that started it', async () => {
    const worker = new Worker(new URL('../helpers/ts-worker.mjs', import.meta.url), { workerData: { entry: new URL('../helpers/launcher-thread.ts', import.meta.url).href } });
    const { parent, launcher } = await new Promise<{ parent: number; launcher: number }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    expect(parent).toBe(launcher);
    expect(pidAlive(launcher)).toBe(true);
    await worker.terminate();
    await until(() => !pidAlive(launcher), 'the launcher of a terminated thread to exit');
  });

  it('keeps the output of concurrent runs apart and whole, and takes a large input', async () => {
    const writers = Array.from({ length: 6 }, (_, n) =>
      runProcess('python3', ['-c', `import sys; sys.stdout.buffer.write(bytes([${n}]) * 300000); sys.stderr.write("e${n}")`], { ...base, maxOutputChars: 400_000 }),
    );
    const results = await Promise.all(writers);
    results.forEach((result, n) => {
      expect(result.exitCode).toBe(0);
      expect(result.stdout).toBe(String.fromCharCode(n).repeat(300_000));
      expect(result.stderr).toBe(`e${n}`);
    });
    const input = 'ü'.repeat(1_500_000);
    const echoed = await runProcess('bash', ['-c', 'cat | wc -c'], { ...base, input });
    expect(Number(echoed.stdout)).toBe(Buffer.byteLength(input));
  });

  it('a request it cannot start (a NUL byte in an argument) fails that run alone, with a message', async () => {
    const bad = await runProcess('bash', ['-c', 'echo a\0b'], base);
    expect(bad.exitCode).toBe(127);
    expect(bad.error).toMatch(/could not start 'bash': .*null/i);
    const launcher = launcherPid();
    const good = await runProcess('bash', ['-c', 'echo $PPID'], base);
    expect(parentOf(good)).toBe(launcher);
  });

  it('is a session of its own: a Ctrl+C or hang-up at the terminal does not reach it', async () => {
    await runProcess('true', [], base);
    const launcher = launcherPid()!;
    const session = Number(fs.readFileSync(`/proc/${launcher}/stat`, 'utf8').split(') ')[1]!.split(' ')[3]);
    expect(session).toBe(launcher);
  });

  it('a run ended by a signal python has no name for is reported, and the thread\'s other runs go on', async () => {
    const other = runProcess('bash', ['-c', 'sleep 0.5; echo finished'], base);
    const realtime = await runProcess('bash', ['-c', 'kill -s RTMIN+1 $$'], base);
    expect(realtime).toMatchObject({ exitCode: null, signal: expect.stringMatching(/^SIG(RT|\d)/) });
    expect(await other).toMatchObject({ exitCode: 0, stdout: 'finished' });
  });

  it('runs an executable script without a #! line with the shell, as a direct start did', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-noshebang-'));
    try {
      const script = path.join(dir, 'plain.sh');
      fs.writeFileSync(script, 'echo ran "$1"\n', { mode: 0o755 });
      expect(await runProcess(script, ['here'], { ...base, cwd: dir })).toMatchObject({ exitCode: 0, stdout: 'ran here' });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers null where no launcher can run (a program that is not python, or none): the thread starts directly then', async () => {
    const request = { argv: ['true'], cwd: os.tmpdir(), env: { PATH: '/usr/bin:/bin' }, maxBuffer: 1000 };
    expect(await new Launcher('/bin/false').launch(request)).toBeNull();
    expect(await new Launcher('/no/such/python3').launch(request)).toBeNull();
  });

  it('git() settles when its launcher is killed under it, and nothing of it is left running', () => {
    const repo = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-git-killed-'));
    try {
      execFileSync('git', ['init', '-q', repo]);
      const child = spawnSync(process.execPath, ['--import', 'tsx', new URL('../helpers/git-launcher-killed.ts', import.meta.url).pathname, repo], { encoding: 'utf8', timeout: 60_000 });
      expect(child.stdout, child.stderr).toMatch(/^rejected: git -c alias\.nap=.* failed: the process launcher was killed under it/);
      expect(child.stdout).toContain('nothing left');
      expect(child.status).toBe(0);
    } finally {
      fs.rmSync(repo, { recursive: true, force: true });
    }
  });

  it('without a launcher (startDirectly), processes are started by this process itself', async () => {
    startDirectly(true);
    const result = await runProcess('bash', ['-c', 'echo $PPID'], base);
    expect(parentOf(result)).toBe(process.pid);
    expect(launcherPid()).toBeUndefined();
  });
});
