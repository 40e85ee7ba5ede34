import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { assertBuilt, CLI, offlineEnv } from '../helpers/repl-cli.js';
import { tempBoard } from '../helpers/repl-session.js';
import { HANG_MS } from '../helpers/agent-wait.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** The line-mode REPL on a fresh board, once it says it reads commands; its output so far, and its exit. */
async function startLineRepl() {
  assertBuilt();
  const dir = tempBoard();
  dirs.push(dir);
  const child = spawn(process.execPath, [CLI, '--dir', dir], { env: offlineEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
  const seen = { out: '', err: '' };
  child.stderr.setEncoding('utf8').on('data', (text: string) => (seen.err += text));
  child.stdout.setEncoding('utf8').on('data', (text: string) => (seen.out += text));
  const exited = new Promise<number | string | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  await new Promise<void>((resolve) => {
    const ready = () => {
      if (!seen.out.includes('Type /help')) return;
      child.stdout.off('data', ready);
      resolve();
    };
    child.stdout.on('data', ready);
  });
  expect(fs.existsSync(path.join(dir, '.team', 'lead.json'))).toBe(true);
  // Up as a person finds it: every teammate idle on the board. When one never comes up, the failure
  // shows what the REPL said and what the registry holds.
  const registry = () => fs.readFileSync(path.join(dir, '.team', 'config.json'), 'utf8');
  const statuses = () => (JSON.parse(registry()) as { members: Array<{ status: string }> }).members.map((member) => member.status);
  await expect
    .poll(statuses, { timeout: HANG_MS, interval: 50 })
    .toEqual(['idle', 'idle', 'idle'])
    .catch((error: Error) => {
      throw new Error(`${error.message}\nstdout:\n${seen.out}\nstderr:\n${seen.err}\n.team/config.json: ${registry()}`);
    });
  return { dir, child, seen, exited, describe: () => `stdout:\n${seen.out}\nstderr:\n${seen.err}` };
}

describe('the line-mode REPL', () => {
  it.each([
    ['SIGTERM', 'terminated'],
    ['SIGHUP', 'hung up'],
  ] as const)('on %s shuts the team down, releases the board and exits 0, so the next lead starts without a takeover', async (signal, said) => {
    const { dir, child, seen, exited, describe } = await startLineRepl();
    child.kill(signal);
    expect(await exited, describe()).toBe(0);
    const lines = seen.out.trim().split('\n');
    expect(lines).toContain(said);
    expect(lines.filter((line) => / shut down \(/.test(line))).toHaveLength(3);
    expect(lines).toContain('shutting the team down…');
    expect(lines.at(-1)).toBe('bye');
    expect(fs.existsSync(path.join(dir, '.team', 'lead.json'))).toBe(false);
    expect(fs.readdirSync(path.join(dir, '.team', '.locks')).filter((name) => name.endsWith('.lock'))).toEqual([]);
  });

  it('whose output stops being read (a pipe closed with its terminal) shuts the team down and releases the board', async () => {
    const { dir, child, seen, exited, describe } = await startLineRepl();
    // The reader goes (as `tee` does when the terminal closes); the next line printed fails with EPIPE.
    child.stdout.destroy();
    child.stdin.write('/team\n');
    expect(await exited, describe()).toBe(0);
    expect(seen.err).toBe('');
    expect(fs.existsSync(path.join(dir, '.team', 'lead.json'))).toBe(false);
  });

  it('whose output is gone before it reads its first line (`| true`) ends at once, the board released', async () => {
    assertBuilt();
    const dir = tempBoard();
    dirs.push(dir);
    // The reader is gone from the start: the first lines printed fail with EPIPE while the team starts,
    // and the input ends at once. It used to close its input before reading it and wait for good.
    const child = spawn(process.execPath, [CLI, '--dir', dir, '--no-team'], { env: offlineEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdout.destroy();
    child.stdin.end();
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => (err += text));
    const exited = new Promise<number | string | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
    expect(await exited, err).toBe(0);
    expect(err).toBe('');
    expect(fs.existsSync(path.join(dir, '.team', 'lead.json'))).toBe(false);
  });
});
