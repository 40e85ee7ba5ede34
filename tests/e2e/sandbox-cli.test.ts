/**
 * How the CLI tells the person about containment: `--version`, the one line at start when code will
 * run unsandboxed, and `--sandbox required` refusing to start. "No bubblewrap" is made real by a PATH
 * that holds only node and python3.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { containment } from '../../src/core/exec/sandbox.js';
import { DOWNLOADS_REQUIREMENT, describeRun, runCli, tempBoard } from '../helpers/pipeline-cli.js';

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) fs.rmSync(root, { recursive: true, force: true });
});

/** A folder of links to everything of /usr/bin and /bin but what `leave` names, and node. */
function binWithout(leave: (name: string) => boolean): string {
  const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-bin-'));
  roots.push(bin);
  for (const dir of ['/usr/bin', '/bin']) {
    for (const name of fs.readdirSync(dir)) {
      if (leave(name) || fs.existsSync(path.join(bin, name))) continue;
      fs.symlinkSync(path.join(dir, name), path.join(bin, name));
    }
  }
  if (!fs.existsSync(path.join(bin, 'node'))) fs.symlinkSync(process.execPath, path.join(bin, 'node'));
  return bin;
}

/** A PATH with everything of /usr/bin and /bin but bwrap (python3 as the real interpreter, not a shim). */
function pathWithoutBwrap(): string {
  const bin = binWithout((name) => name === 'bwrap');
  const python = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();
  fs.rmSync(path.join(bin, 'python3'), { force: true });
  fs.symlinkSync(python, path.join(bin, 'python3'));
  return bin;
}

describe('the CLI and the sandbox', () => {
  it.runIf(containment().kind === 'bwrap')('--version names bubblewrap when it works here', async () => {
    const run = await runCli(['--version'], { cwd: os.tmpdir() });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^\d+\.\d+\.\d+\nsandbox: bubblewrap \(.*bwrap\) — workspace only, no network by default\n$/);
  });

  it.runIf(containment().kind === 'bwrap')('--version names bubblewrap with a folder of program links under /tmp first on PATH', async () => {
    const links = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-links-'));
    roots.push(links);
    for (const program of ['node', 'bwrap', 'prlimit', 'nice', 'sh', 'true', 'python3']) {
      const found = execFileSync('sh', ['-c', `command -v ${program} || true`], { encoding: 'utf8' }).trim();
      if (found) fs.symlinkSync(found, path.join(links, program));
    }
    const run = await runCli(['--version'], { cwd: os.tmpdir(), env: { PATH: links } });
    expect(run.stdout).toMatch(/^\d+\.\d+\.\d+\nsandbox: bubblewrap \(.*bwrap\) — workspace only, no network by default\n$/);
  });

  it('without bubblewrap: --version and the start say once that code runs unsandboxed, and how to install it', async () => {
    const env = { PATH: pathWithoutBwrap() };
    const version = await runCli(['--version'], { cwd: os.tmpdir(), env });
    expect(version.stdout).toMatch(/sandbox: none — code the agents run is NOT sandboxed \(bubblewrap \(bwrap\) is not installed or not on PATH\); install bubblewrap/);
    const root = tempBoard();
    roots.push(root);
    const run = await runCli(['run', '--auto', '--dir', root, DOWNLOADS_REQUIREMENT], { cwd: root, env });
    expect(run.code, describeRun(run)).toBe(0);
    expect(run.stderr.match(/code the agents run is NOT sandboxed/g)).toHaveLength(1);
  });

  it('--sandbox required without bubblewrap refuses to start: one line, exit 2, nothing posted', async () => {
    const root = tempBoard();
    roots.push(root);
    const run = await runCli(['run', '--auto', '--sandbox', 'required', '--dir', root, DOWNLOADS_REQUIREMENT], { cwd: root, env: { PATH: pathWithoutBwrap() } });
    expect(run.code, describeRun(run)).toBe(2);
    expect(run.stderr.trim()).toMatch(/^autoteam: --sandbox required: bubblewrap \(bwrap\) is not installed or not on PATH; install bubblewrap/);
    expect(fs.existsSync(path.join(root, '.tasks'))).toBe(false);
  });

  it('without python3 on PATH says so once at the start, with what fails and what to do', async () => {
    const root = tempBoard();
    roots.push(root);
    const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-nopython-'));
    roots.push(bin);
    fs.symlinkSync(process.execPath, path.join(bin, 'node'));
    // A bad --timeout ends the run right after the start's checks: exit 2, nothing posted.
    const run = await runCli(['run', '--auto', '--timeout', '60', '--dir', root, 'x'], { cwd: root, env: { PATH: bin } });
    expect(run.code, describeRun(run)).toBe(2);
    expect(run.stderr).toMatch(/^autoteam: python3 is not on PATH: the engineer cannot run Python programs, and the reviewer's checks \(and its linter, tests and complexity count of Python\) fail; install python3 or add it to PATH$/m);
    // With python3 there, no such line.
    const fine = await runCli(['run', '--auto', '--timeout', '60', '--dir', root, 'x'], { cwd: root });
    expect(fine.code).toBe(2);
    expect(fine.stderr).not.toMatch(/python3/);
  });

  it('without python3 on PATH a run fails at the engineer\'s first run of the program, naming python3, not a later refusal', async () => {
    const root = tempBoard();
    roots.push(root);
    const run = await runCli(['run', '--auto', '--dir', root, DOWNLOADS_REQUIREMENT], { cwd: root, env: { PATH: binWithout((name) => name.startsWith('python')) } });
    expect(run.code, describeRun(run)).toBe(1);
    const why = 'the run of organize.py could not find `python3` on this machine (exit 127): install python3 or add it to PATH, then run again';
    expect(run.stdout).toContain(`pipeline #1: FAILED — ${why}`);
    expect(run.stdout).toMatch(/^ {2}\[engineer\] bash: exit 127 /m);
    expect(run.stdout).not.toMatch(/submit_for_review|refused/);
  });

  it("without python3 a JavaScript pipeline's review fails naming python3 (its checks are Python), not sending the engineer to mend working code", async () => {
    const root = tempBoard();
    roots.push(root);
    const run = await runCli(['run', '--auto', '--dir', root, 'Write a JavaScript script that counts the words in a text file.'], { cwd: root, env: { PATH: binWithout((name) => name.startsWith('python')) } });
    expect(run.code, describeRun(run)).toBe(1);
    expect(run.stdout).toContain("pipeline #1: FAILED — the review's tools could not run: `python3` is not found on this machine (exit 127); install python3 or add it to PATH, then run again");
    expect(run.stdout).not.toMatch(/request_revision|Revise \(1\)/);
  });

  it('rejects a bad --sandbox mode and an unknown --allow-network stage with exit 2', async () => {
    const root = tempBoard();
    roots.push(root);
    const mode = await runCli(['run', '--auto', '--sandbox', 'maybe', '--dir', root, 'x'], { cwd: root });
    expect(mode.code).toBe(2);
    expect(mode.stderr).toMatch(/--sandbox: 'maybe' is not one of auto, required, off/);
    const stage = await runCli(['run', '--auto', '--allow-network', 'implementaton', '--dir', root, 'x'], { cwd: root });
    expect(stage.code).toBe(2);
    expect(stage.stderr).toMatch(/--allow-network: unknown stage implementaton/);
  });
});
