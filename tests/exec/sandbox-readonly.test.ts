/**
 * A process's own files under /tmp (an MCP server in a checkout there) come back read-only inside
 * the sandbox, whose /tmp is a fresh tmpfs; a folder around the board never does. Real bubblewrap.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { containment, DEFAULT_LIMITS, Sandbox } from '../../src/core/exec/sandbox.js';
import { ownFolders } from '../../src/core/mcp/toolbox.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function tmp(prefix: string): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  dirs.push(dir);
  return dir;
}

const contained = containment();

describe.runIf(contained.kind === 'bwrap')('read-only folders under /tmp', () => {
  it('a server\'s package under /tmp is readable, not writable; one around the board stays hidden', () => {
    const checkout = tmp('autoteam-checkout-');
    fs.writeFileSync(path.join(checkout, 'package.json'), '{}');
    fs.mkdirSync(path.join(checkout, 'bin'));
    fs.writeFileSync(path.join(checkout, 'bin', 'server.mjs'), 'console.log("served")');
    const board = path.join(checkout, 'board');
    fs.mkdirSync(board);
    const workspace = tmp('autoteam-server-');
    const own = ownFolders(process.execPath, [path.join(checkout, 'bin', 'server.mjs')]);
    expect(own).toContain(checkout);
    const run = (hidden: string[], script: string) => {
      const sandbox = new Sandbox({ workspace, hidden, network: false, limits: DEFAULT_LIMITS, readOnly: own }, contained);
      const { command, args } = sandbox.command('/bin/sh', ['-c', script]);
      try {
        return execFileSync(command, args, { cwd: workspace, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
      } catch (error) {
        return `exit ${(error as { status: number }).status}: ${String((error as { stderr: string }).stderr).trim()}`;
      }
    };
    expect(run([], `${process.execPath} ${path.join(checkout, 'bin', 'server.mjs')}`)).toBe('served');
    expect(run([], `touch ${path.join(checkout, 'x')}`)).toMatch(/^exit 1: .*Read-only file system/);
    // The same folder holds a board: it is not bound, so the server is not there inside.
    expect(run([board], `test -e ${path.join(checkout, 'bin', 'server.mjs')} && echo seen || echo hidden`)).toBe('hidden');
  });

  it('a PATH entry under /tmp comes back read-only: its programs run inside, the limits\' wrapper found there too', () => {
    const tools = tmp('autoteam-path-');
    fs.writeFileSync(path.join(tools, 'greet'), '#!/bin/sh\necho hello from /tmp\n', { mode: 0o755 });
    // A folder of links to the system's programs, prlimit among them, first on PATH.
    for (const program of ['prlimit', 'nice', 'sh']) fs.symlinkSync(execFileSync('sh', ['-c', `command -v ${program}`], { encoding: 'utf8' }).trim(), path.join(tools, program));
    const workspace = tmp('autoteam-path-ws-');
    const sandbox = new Sandbox({ workspace, hidden: [], network: false, limits: DEFAULT_LIMITS, baseEnv: { PATH: `${tools}:/usr/bin:/bin` } }, contained);
    const { command, args } = sandbox.command('greet', []);
    expect(execFileSync(command, args, { cwd: workspace, encoding: 'utf8', env: sandbox.env() }).trim()).toBe('hello from /tmp');
    const write = sandbox.command('/bin/sh', ['-c', `touch ${path.join(tools, 'x')} 2>&1 || echo refused`]);
    expect(execFileSync(write.command, write.args, { cwd: workspace, encoding: 'utf8', env: sandbox.env() })).toMatch(/Read-only file system/);
  });

  it('a package in node_modules brings the whole node_modules (its dependencies are hoisted there)', () => {
    const root = tmp('autoteam-modules-');
    const entry = path.join(root, 'node_modules', '@scope', 'server', 'dist', 'index.js');
    fs.mkdirSync(path.dirname(entry), { recursive: true });
    fs.writeFileSync(entry, '');
    expect(ownFolders('node', [entry, '--flag', 'relative/file.js'])).toEqual([path.join(root, 'node_modules')]);
  });
});
