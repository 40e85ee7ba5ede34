import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { scratchDir, sweepScratch } from '../../src/core/exec/scratch.js';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
});

function deadPid(): number {
  return Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout);
}

describe('scratch folders', () => {
  it('are named after their process, and a sweep removes those whose process is gone, keeping live ones and foreign folders', () => {
    const own = scratchDir('check');
    roots.push(own);
    expect(path.basename(own)).toMatch(new RegExp(`^autoteam-check-${process.pid}-[A-Za-z0-9]{6}$`));

    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-sweep-'));
    roots.push(tmp);
    const make = (name: string, ageMs = 0) => {
      const dir = path.join(tmp, name);
      fs.mkdirSync(dir);
      fs.writeFileSync(path.join(dir, 'copy.py'), 'print(1)\n');
      const at = new Date(Date.now() - ageMs);
      fs.utimesSync(dir, at, at);
      return dir;
    };
    const dead = deadPid();
    const killedCheck = make(`autoteam-check-${dead}-a1B2c3`);
    const killedSmoke = make(`autoteam-smoke-${dead}-d4E5f6`);
    const live = make(`autoteam-smoke-${process.ppid}-g7H8i9`);
    const oldUnnamed = make('autoteam-index-Zz9Yy8', 2 * 3_600_000);
    const newUnnamed = make('autoteam-check-Xx7Ww6');
    const foreign = make(`someone-check-${dead}-a1B2c3`);

    expect(sweepScratch(tmp)).toBe(3);
    expect([killedCheck, killedSmoke, oldUnnamed].map((dir) => fs.existsSync(dir))).toEqual([false, false, false]);
    expect([live, newUnnamed, foreign].map((dir) => fs.existsSync(dir))).toEqual([true, true, true]);
  });
});
