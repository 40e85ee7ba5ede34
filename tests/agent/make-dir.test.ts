/** makeDir: `mkdir -p` that fails at once where Node 20's recursive mkdirSync never returns (/proc). */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeDir } from '../../src/core/make-dir.js';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
});

describe('makeDir', () => {
  it('makes every missing folder down the path, and is a no-op for one that is there', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-make-dir-'));
    roots.push(root);
    const deep = path.join(root, 'a', 'b', 'c');
    makeDir(deep);
    expect(fs.statSync(deep).isDirectory()).toBe(true);
    makeDir(deep);
    expect(fs.readdirSync(path.join(root, 'a'))).toEqual(['b']);
  });

  it('fails with the error of the folder it could not make: a file in the way, a place that takes no folders', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-make-dir-'));
    roots.push(root);
    fs.writeFileSync(path.join(root, 'file'), 'x');
    expect(() => makeDir(path.join(root, 'file', 'sub'))).toThrow(expect.objectContaining({ code: 'ENOTDIR' }));
    expect(() => makeDir(path.join(root, 'file'))).toThrow(expect.objectContaining({ code: 'EEXIST' }));
    if (process.platform === 'linux') expect(() => makeDir('/proc/autoteam-none/sub')).toThrow(expect.objectContaining({ code: 'ENOENT', path: '/proc/autoteam-none' }));
  });
});
