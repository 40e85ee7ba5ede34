/**
 * The sandbox around every process an agent starts, with the real bubblewrap (installed by .ci/run)
 * and without it (the fallback: allow-listed environment, limits, process group plus sweep).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startDirectly } from '../../src/core/exec/launcher.js';
import { type ProcessResult, runProcess } from '../../src/core/exec/process.js';
import { CODE_NICENESS, type Containment, containment, DEFAULT_LIMITS, type ResourceLimits, Sandbox } from '../../src/core/exec/sandbox.js';
import { HANG_MS, until } from '../helpers/agent-wait.js';

const bwrap = containment();
/** Linux's autogroup scheduling is there (CONFIG_SCHED_AUTOGROUP, on by default in most kernels). */
const AUTOGROUPS = fs.existsSync('/proc/self/autogroup');
const SECRET = `ghp_sandbox_${process.pid}_secret_value`;
const roots: string[] = [];

beforeAll(() => {
  process.env.GH_PAT = SECRET;
  process.env.DATABASE_URL = `postgres://app:${SECRET}@db.internal/app`;
});
afterAll(() => {
  delete process.env.GH_PAT;
  delete process.env.DATABASE_URL;
  for (const root of roots) fs.rmSync(root, { recursive: true, force: true });
});

/** A board root with a task file and a workspace inside it, as the runtime lays them out. */
function board(): { root: string; workspace: string } {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-sandbox-')));
  roots.push(root);
  fs.mkdirSync(path.join(root, '.tasks'));
  fs.writeFileSync(path.join(root, '.tasks', 'task_1.json'), '{"id": 1}\n');
  fs.writeFileSync(path.join(root, '.env'), `GH_PAT=${SECRET}\n`);
  const workspace = path.join(root, 'workspace', '1');
  fs.mkdirSync(workspace, { recursive: true });
  return { root, workspace };
}

function alive(pattern: string): boolean {
  try {
    execFileSync('pgrep', ['-f', pattern]);
    return true;
  } catch {
    return false;
  }
}

const profiles: Array<[string, Containment | null]> = [
  ['bubblewrap', bwrap.kind === 'bwrap' ? bwrap : null],
  ['no bubblewrap (fallback)', { kind: 'none', reason: 'test' }],
];

describe.each(profiles)('sandbox: %s', (label, contained) => {
  const run = (command: string, options: { timeoutMs?: number; limits?: Partial<ResourceLimits>; network?: boolean } = {}) => {
    const { root, workspace } = board();
    const sandbox = new Sandbox(
      { workspace, hidden: [root], network: options.network ?? false, limits: { ...DEFAULT_LIMITS, ...options.limits } },
      contained!,
    );
    return { root, workspace, result: runProcess('bash', ['-c', command], { cwd: workspace, timeoutMs: options.timeoutMs ?? 20_000, maxOutputChars: 20_000, sandbox }) };
  };
  // Digits only: `sleep 3645.<digits>` must be a valid interval. An hour or more: the process never
  // ends on its own within a test, so a run that returns proves it was stopped.
  const marker = () => `${Math.floor(Math.random() * 1e6)}${process.pid % 1000}`;
  const leftovers: string[] = [];
  afterEach(() => {
    for (const pattern of leftovers.splice(0)) {
      try {
        execFileSync('pkill', ['-f', pattern], { stdio: 'ignore' });
      } catch {
        // nothing left: the point of the test
      }
    }
  });

  it.runIf(contained)('gives executed code only the allow-listed environment, a private HOME and TMPDIR', async () => {
    const { workspace, result } = run('env');
    const out = (await result).stdout;
    expect(out).not.toContain(SECRET);
    const names = out.split('\n').map((line) => line.split('=')[0]).filter(Boolean);
    for (const name of names) expect(name).toMatch(/^(PATH|LANG|LANGUAGE|LC_\w+|TERM|TZ|COLUMNS|LINES|HOME|TMPDIR|PYTHONDONTWRITEBYTECODE|AUTOTEAM_RUN|AUTOTEAM_OWNER|PWD|SHLVL|_|OLDPWD)$/);
    expect(out).toContain(`HOME=${path.join(workspace, '.home')}`);
    expect(out).toContain(`TMPDIR=${path.join(workspace, '.tmp')}`);
  });

  it.runIf(contained)('runs executed code, and what it starts, below the runtime\'s priority', async () => {
    const { result } = run('nice; bash -c nice; python3 -c "import os; print(os.nice(0))"');
    const done = await result;
    const expected = String(Math.min(19, os.getPriority() + CODE_NICENESS));
    expect(done.stdout.trim().split('\n'), done.stderr).toEqual([expected, expected, expected]);
    expect(os.getPriority()).toBeLessThan(Number(expected));
  });

  // Under autogroup scheduling a session shares the CPU as one, whatever its processes' niceness: code
  // in a session of its own at nice 10 took as much of a busy machine as the whole runtime.
  it.runIf(contained && AUTOGROUPS)('runs executed code in a session that is itself below the runtime\'s priority', async () => {
    const done = await run('cat /proc/self/autogroup').result;
    expect(done.stdout.trim(), done.stderr).toMatch(new RegExp(`^/autogroup-\\d+ nice ${CODE_NICENESS}$`));
    // The runtime's own session is untouched: nice 0, or empty where it is the kernel's default
    // autogroup (a process tree that never started a session, as on some CI machines).
    expect(fs.readFileSync('/proc/self/autogroup', 'utf8')).toMatch(/^(\/autogroup-\d+ nice 0\n?)?$/);
  });

  it.runIf(contained && AUTOGROUPS && label === 'bubblewrap')('keeps code from giving its session back the runtime\'s priority: /proc is read-only inside', async () => {
    const done = await run('echo 0 > /proc/self/autogroup; cat /proc/self/autogroup').result;
    expect(done.stderr).toMatch(/Read-only file system/);
    expect(done.stdout.trim()).toMatch(new RegExp(` nice ${CODE_NICENESS}$`));
  });

  it.runIf(contained && label === 'bubblewrap')('gives code a session of its own unless its caller starts it with no terminal', () => {
    const { root, workspace } = board();
    const sandbox = new Sandbox({ workspace, hidden: [root], network: false, limits: DEFAULT_LIMITS }, contained!);
    expect(sandbox.command('true', []).args).toContain('--new-session');
    expect(sandbox.command('true', [], null, { detached: true }).args).not.toContain('--new-session');
  });

  it.runIf(contained)('a stop signal does not leave a run stopped until its timeout', async () => {
    const done = await run('python3 -c "import os, signal; os.kill(os.getpid(), signal.SIGTSTP); print(\'not stopped\')"').result;
    expect(done, done.stderr).toMatchObject({ exitCode: 0, stdout: 'not stopped', timedOut: false });
  });

  it.runIf(contained && AUTOGROUPS)('started directly (no launcher), still runs executed code in a session below the runtime\'s', async () => {
    startDirectly(true);
    try {
      // The session is lowered as the run starts: the code waits for it rather than race it.
      const done = await run(`for i in $(seq 100); do grep -q ' nice ${CODE_NICENESS}$' /proc/self/autogroup && break; sleep 0.02; done; cat /proc/self/autogroup`).result;
      expect(done.stdout.trim(), done.stderr).toMatch(new RegExp(`^/autogroup-\\d+ nice ${CODE_NICENESS}$`));
    } finally {
      startDirectly(false);
    }
  });

  it.runIf(contained)('kills a setsid child and a double fork when the command ends, without waiting for them', async () => {
    const a = marker();
    const b = marker();
    leftovers.push(`sleep 3645.${a}`, `sleep 3646.${b}`);
    // Had the call waited for them (they hold the output pipe), it would have taken an hour.
    const { result } = run(`setsid sleep 3645.${a} & (setsid bash -c 'sleep 3646.${b} & wait' &) ; echo started`);
    const done = await result;
    expect(done).toMatchObject({ exitCode: 0, stdout: 'started', timedOut: false });
    expect(alive(`sleep 3645.${a}`)).toBe(false);
    expect(alive(`sleep 3646.${b}`)).toBe(false);
  });

  it.runIf(contained)('kills every descendant at the timeout, setsid ones included', async () => {
    const a = marker();
    leftovers.push(`sleep 3647.${a}`);
    // The timeout must come after the setsid child started: a machine too slow for that gets the run
    // again with twice the time.
    let done: ProcessResult;
    for (let timeoutMs = 700; ; timeoutMs *= 2) {
      done = await run(`setsid sleep 3647.${a} & echo started; sleep 3600`, { timeoutMs }).result;
      if (done.stdout === 'started' || timeoutMs > HANG_MS) break;
    }
    expect(done).toMatchObject({ timedOut: true, stdout: 'started' });
    expect(alive(`sleep 3647.${a}`)).toBe(false);
  });

  it.runIf(contained)('stops a process at the memory limit and names the limit', async () => {
    const { result } = run('python3 -c "x = bytearray(700 * 1024 * 1024); print(len(x))"', { limits: { memoryMb: 256 } });
    const done = await result;
    expect(done.exitCode).not.toBe(0);
    expect(done.limit).toEqual({ limit: 'memory', text: 'the memory limit (256 MB of data per process) was hit' });
  });

  it.runIf(contained)('runs a Node program that uses WebAssembly (as Node\'s own fetch does) under the default memory limit', async () => {
    // V8 reserves gigabytes of address space for a WebAssembly memory and touches little of it: under
    // an address-space limit of 2 GB this died with "Out of memory: Cannot allocate Wasm memory".
    const { result } = run(`${JSON.stringify(process.execPath)} -e 'new WebAssembly.Memory({ initial: 1 }); globalThis.Headers; console.log("alive")'`);
    const done = await result;
    expect(done.stderr).toBe('');
    expect(done).toMatchObject({ exitCode: 0, stdout: 'alive' });
  });

  it.runIf(contained)('stops a write at the file size limit and names the limit', async () => {
    const { workspace, result } = run('head -c 5000000 /dev/zero > big.bin; echo after', { limits: { fileSizeMb: 1 } });
    const done = await result;
    expect(done.limit).toEqual({ limit: 'file size', text: 'the file size limit (1 MB per file) was hit' });
    expect(fs.statSync(path.join(workspace, 'big.bin')).size).toBeLessThanOrEqual(1024 * 1024);
  });
});

describe.runIf(bwrap.kind === 'bwrap')('sandbox: what only bubblewrap contains', () => {
  const sandboxed = (command: string, network = false) => {
    const { root, workspace } = board();
    const sandbox = new Sandbox({ workspace, hidden: [root], network, limits: DEFAULT_LIMITS }, bwrap);
    return { root, workspace, result: runProcess('bash', ['-c', command], { cwd: workspace, timeoutMs: 20_000, maxOutputChars: 20_000, sandbox }) };
  };

  it("cannot read the runtime's environment through its parent or PID 1", async () => {
    const { result } = sandboxed('tr "\\0" "\\n" < /proc/$PPID/environ; echo ---; tr "\\0" "\\n" < /proc/1/environ; echo ---; ps -e -o pid=,comm=');
    const done = await result;
    expect(done.exitCode, done.stderr).toBe(0);
    expect(done.stdout).not.toContain(SECRET);
    expect(done.stdout).not.toMatch(/ANTHROPIC_|GH_PAT|DATABASE_URL/);
    // Its own PID namespace: the host's processes (this test runner) are not there.
    const processes = done.stdout.split('---').at(-1)!.trim().split('\n').map((line) => line.trim().split(/\s+/)[1]);
    for (const name of processes) expect(['bwrap', 'bash', 'ps']).toContain(name);
    expect(processes[0]).toBe('bwrap');
  });

  it('cannot see or write the board: task files, the .env, the inbox', async () => {
    const { root, result } = sandboxed(
      'ls -a ../..; cat ../../.env; cat ../../.tasks/task_1.json; echo \'{"id":77,"verdict":"approved"}\' > ../../.tasks/task_77.json; echo status=$?',
    );
    const done = await result;
    expect(done.stdout).not.toContain(SECRET);
    expect(done.stdout).not.toContain('.tasks');
    expect(done.stdout).toMatch(/status=1/);
    expect(fs.existsSync(path.join(root, '.tasks', 'task_77.json'))).toBe(false);
    expect(fs.readdirSync(path.join(root, '.tasks'))).toEqual(['task_1.json']);
  });

  it('sees the system read-only and the home directory empty', async () => {
    const { result } = sandboxed(`touch /usr/autoteam-probe; echo usr=$?; ls -A ${os.homedir()} | grep -v '^\\.' | wc -l`);
    const done = await result;
    expect(done.stdout).toMatch(/usr=1/);
    expect(fs.existsSync('/usr/autoteam-probe')).toBe(false);
  });

  it('has no network unless allowed', async () => {
    const server = net.createServer((socket) => socket.end('hello from the host\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const probe = `python3 -c "import socket; s = socket.create_connection(('127.0.0.1', ${port}), timeout=3); print(s.recv(100).decode())"`;
      const closed = await sandboxed(probe).result;
      expect(closed.exitCode).not.toBe(0);
      expect(closed.stdout).not.toContain('hello from the host');
      const open = await sandboxed(probe, true).result;
      expect(open.exitCode, open.stderr).toBe(0);
      expect(open.stdout).toContain('hello from the host');
    } finally {
      server.close();
    }
  });

  it('keeps what it wrote in the workspace, and nothing outside', async () => {
    // A name of its own: whatever else on the machine made under /tmp is not this test's business.
    const outside = `/tmp/autoteam-sandbox-probe-${process.pid}-${Date.now()}`;
    const { workspace, result } = sandboxed(`echo made > made.txt; echo tmp > ${outside}; echo $TMPDIR`);
    const done = await result;
    expect(done.exitCode).toBe(0);
    expect(fs.readFileSync(path.join(workspace, 'made.txt'), 'utf8')).toBe('made\n');
    expect(fs.existsSync(outside)).toBe(false);
  });
});

describe('the runtime\'s own helpers are no way out', () => {
  it('the linter and the complexity analysis never import a module the workspace plants (json.py)', async () => {
    const { lintFile } = await import('../../src/core/exec/lint.js');
    const { analyzeComplexity } = await import('../../src/core/exec/complexity.js');
    const { root, workspace } = board();
    const marker = path.join(root, 'PLANTED_MODULE_RAN');
    fs.writeFileSync(path.join(workspace, 'json.py'), `open(${JSON.stringify(marker)}, 'w').write('ran')\n`);
    fs.writeFileSync(path.join(workspace, 'main.py'), '"""Main."""\nprint("hi")\n');
    const sandbox = new Sandbox({ workspace, hidden: [root], network: false, limits: DEFAULT_LIMITS }, { kind: 'none', reason: 'test' });
    const report = await lintFile(workspace, 'main.py', { sandbox });
    expect(report.ok).toBe(true);
    const complexity = await analyzeComplexity(workspace, 'main.py', { sandbox });
    expect(complexity.file).toBe('main.py');
    expect(fs.existsSync(marker)).toBe(false);
  });

  it('a smoke run copies no file through a link (a package.json pointing at a secret stays behind)', async () => {
    const { runTests } = await import('../../src/core/exec/test-runner.js');
    const { root, workspace } = board();
    fs.writeFileSync(path.join(workspace, 'app.mjs'), "// Print package.json if there is one.\nimport fs from 'node:fs';\nconsole.log(fs.existsSync('package.json') ? fs.readFileSync('package.json', 'utf8') : 'no package.json');\n");
    fs.symlinkSync(path.join(root, '.env'), path.join(workspace, 'package.json'));
    const result = await runTests(workspace, 'app.mjs', { timeoutMs: 20_000, maxOutputChars: 10_000 });
    expect(result.output).toContain('no package.json');
    expect(result.output).not.toContain(SECRET);
  });

  it('a PATH entry under the home directory is bound alone, not the folder around it', () => {
    const home = os.homedir();
    const entry = path.join(home, '.autoteam-test-tool', 'bin');
    const secret = path.join(home, '.autoteam-test-tool', 'credentials');
    fs.mkdirSync(entry, { recursive: true });
    fs.writeFileSync(secret, SECRET);
    try {
      const { root, workspace } = board();
      const sandbox = new Sandbox({ workspace, hidden: [root], network: false, limits: DEFAULT_LIMITS, baseEnv: { PATH: `${entry}:/usr/bin:/bin` } }, { kind: 'bwrap', bwrap: '/usr/bin/bwrap', sizedTmp: true });
      const { args } = sandbox.command('true', []);
      const binds = args.flatMap((arg, i) => (arg === '--ro-bind' ? [args[i + 1]!] : []));
      expect(binds).toContain(entry);
      expect(binds).not.toContain(path.dirname(entry));
      expect(args).toContain('--tmpfs');
      expect(args[args.indexOf(home) - 1]).toBe('--tmpfs');
    } finally {
      fs.rmSync(path.join(home, '.autoteam-test-tool'), { recursive: true, force: true });
    }
  });
});

describe('orphans', () => {
  it('the lead\'s sweep kills what a dead autoteam process left running, and nothing of a live one', async () => {
    const { spawn, spawnSync } = await import('node:child_process');
    const { sweepOrphans } = await import('../../src/core/exec/process.js');
    const dead = Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout);
    const tag = `${Date.now() % 100000}${process.pid % 1000}`;
    const orphan = spawn('sleep', [`301.${tag}`], { env: { PATH: process.env.PATH ?? '', AUTOTEAM_OWNER: String(dead) }, detached: true, stdio: 'ignore' });
    const kept = spawn('sleep', [`302.${tag}`], { env: { PATH: process.env.PATH ?? '', AUTOTEAM_OWNER: String(process.pid) }, detached: true, stdio: 'ignore' });
    orphan.unref();
    kept.unref();
    try {
      let exited = false;
      const gone = new Promise<void>((resolve) => orphan.once('exit', () => ((exited = true), resolve())));
      // Both have started (exec'd sleep) before the sweep looks. The orphan may already be gone: any
      // lead on this machine sweeps every 2 s (another test's, another suite's), and kills it just the same.
      await until(() => alive(`sleep 302.${tag}`) && (exited || alive(`sleep 301.${tag}`)), 'both sleeps running');
      sweepOrphans();
      // Killed by a sweep (this one, or another lead's): a sweep that killed nothing would leave it to
      // its 301 s, and this wait would fail at the test's ceiling.
      await gone;
      expect(alive(`sleep 301.${tag}`)).toBe(false);
      expect(alive(`sleep 302.${tag}`)).toBe(true);
    } finally {
      kept.kill('SIGKILL');
      orphan.kill('SIGKILL');
    }
  });
});
