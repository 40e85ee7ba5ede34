import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AutoteamError } from '../../src/core/errors.js';
import { PathEscapeError, resolveInWorkspace } from '../../src/core/exec/sandbox-path.js';

let root: string;
let workspace: string;
let outside: string;

beforeEach(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-sandbox-')));
  workspace = path.join(root, 'ws');
  outside = path.join(root, 'outside');
  fs.mkdirSync(workspace);
  fs.mkdirSync(outside);
  fs.writeFileSync(path.join(outside, 'secret.txt'), 'secret');
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

function refusal(relPath: string): PathEscapeError {
  try {
    resolveInWorkspace(workspace, relPath);
  } catch (error) {
    expect(error).toBeInstanceOf(PathEscapeError);
    expect(error).toBeInstanceOf(AutoteamError);
    return error as PathEscapeError;
  }
  throw new Error(`'${relPath}' was not refused`);
}

describe('resolveInWorkspace', () => {
  it('resolves relative paths, including ones that do not exist yet', () => {
    expect(resolveInWorkspace(workspace, 'organize.py')).toBe(path.join(workspace, 'organize.py'));
    expect(resolveInWorkspace(workspace, 'src/new/deep.py')).toBe(path.join(workspace, 'src/new/deep.py'));
    expect(resolveInWorkspace(workspace, 'src/../a.py')).toBe(path.join(workspace, 'a.py'));
    expect(resolveInWorkspace(workspace, path.join(workspace, 'b.py'))).toBe(path.join(workspace, 'b.py'));
  });

  it('refuses absolute paths outside and .. escapes, saying paths must stay inside', () => {
    const error = refusal('/etc/passwd');
    expect(error.code).toBe('PATH_ESCAPE');
    expect(error.message).toMatch(/must stay inside the workspace/);
    refusal('../outside/secret.txt');
    refusal('src/../../outside/x.py');
    refusal('..');
  });

  it('refuses null bytes', () => {
    expect(refusal('a.py\0.txt').message).toMatch(/null byte/);
  });

  it('refuses a symlinked directory that points outside, even for files that do not exist yet', () => {
    fs.symlinkSync(outside, path.join(workspace, 'link'));
    expect(refusal('link/secret.txt').message).toMatch(/symbolic link/);
    refusal('link/new-file.txt');
    refusal('link');
  });

  it('refuses a symlinked file and a dangling symlink that point outside', () => {
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(workspace, 'secret.txt'));
    refusal('secret.txt');
    fs.symlinkSync(path.join(outside, 'not-yet.txt'), path.join(workspace, 'dangling.txt'));
    refusal('dangling.txt');
  });

  it('allows symlinks that stay inside the workspace', () => {
    fs.mkdirSync(path.join(workspace, 'real'));
    fs.symlinkSync(path.join(workspace, 'real'), path.join(workspace, 'alias'));
    expect(resolveInWorkspace(workspace, 'alias/x.py')).toBe(path.join(workspace, 'alias/x.py'));
  });

  it('works when the workspace itself is reached through a symlink', () => {
    const linkedWorkspace = path.join(root, 'ws-link');
    fs.symlinkSync(workspace, linkedWorkspace);
    expect(resolveInWorkspace(linkedWorkspace, 'a.py')).toBe(path.join(linkedWorkspace, 'a.py'));
    expect(() => resolveInWorkspace(linkedWorkspace, '../outside/secret.txt')).toThrow(PathEscapeError);
  });
});
