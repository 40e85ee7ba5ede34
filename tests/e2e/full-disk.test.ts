/**
 * A full disk, for real: a tiny tmpfs mounted by the test (root only; skipped with a note otherwise).
 * An inbox append that fails leaves no torn line, and `autoteam run` ends with one line and exit 1.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Mailbox } from '../../src/core/board/mailbox.js';
import { DOWNLOADS_REQUIREMENT, describeRun, runCli } from '../helpers/pipeline-cli.js';

const mounts: string[] = [];
afterEach(() => {
  for (const dir of mounts.splice(0)) {
    spawnSync('umount', ['-l', dir]);
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

/** A tmpfs of `kb` KiB, or null where this process may not mount one. */
function tinyDisk(kb: number): string | null {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-full-'));
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${kb}k`, 'tmpfs', dir]);
  if (mounted.status !== 0) {
    fs.rmSync(dir, { recursive: true, force: true });
    return null;
  }
  mounts.push(dir);
  return dir;
}

const canMount = process.getuid?.() === 0 && (() => {
  const probe = tinyDisk(16);
  return probe !== null;
})();
if (!canMount) console.warn('full-disk tests skipped: mounting a tmpfs needs root');

/** Fills `dir`'s filesystem up to its last `leaveBytes`. */
function fill(dir: string, leaveBytes: number): void {
  const free = Number(execFileSync('df', ['-B1', '--output=avail', dir], { encoding: 'utf8' }).trim().split('\n').at(-1));
  fs.writeFileSync(path.join(dir, 'filler'), Buffer.alloc(Math.max(0, free - leaveBytes)));
}

describe.runIf(canMount)('a full disk', () => {
  it('an inbox append that fails leaves the inbox as it was; the next message after space frees up is whole', async () => {
    const dir = tinyDisk(64)!;
    const mailbox = new Mailbox(dir);
    await mailbox.registry.ensure('t');
    await mailbox.registry.join('eng', 'engineer');
    await mailbox.send('lead', 'eng', 'first');
    fill(dir, 0);
    await expect(mailbox.send('lead', 'eng', 'x'.repeat(20_000))).rejects.toMatchObject({ code: 'ENOSPC' });
    fs.rmSync(path.join(dir, 'filler'));
    await mailbox.send('lead', 'eng', 'after');
    const lines = fs.readFileSync(path.join(dir, '.team', 'inbox', 'eng.jsonl'), 'utf8').trim().split('\n');
    expect(lines.map((line) => (JSON.parse(line) as { content: string }).content)).toEqual(['first', 'after']);
    expect((await mailbox.drain('eng')).map((m) => m.content)).toEqual(['first', 'after']);
    expect(fs.existsSync(path.join(dir, '.team', 'inbox', 'eng.rejected.jsonl'))).toBe(false);
  });

  it('autoteam run on a disk that fills up ends with one line and exit 1, not a hang', async () => {
    const dir = tinyDisk(200)!;
    fs.mkdirSync(path.join(dir, 'b'));
    fs.writeFileSync(path.join(dir, 'filler'), Buffer.alloc(150 * 1024));
    const run = await runCli(['run', '--auto', '--dir', path.join(dir, 'b'), DOWNLOADS_REQUIREMENT], { cwd: os.tmpdir() });
    expect(run.signal, `the run hung and was killed\n${describeRun(run)}`).toBeNull();
    expect(run.code, describeRun(run)).toBe(1);
    expect(`${run.stdout}${run.stderr}`).toMatch(/ENOSPC/);
  });
});
