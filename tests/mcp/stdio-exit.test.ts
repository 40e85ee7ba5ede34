/**
 * Why a stdio MCP server stopped, as the person and the model read it: the line of its stderr that
 * names the error (not Node's version line after it), and a file it was started with that the
 * sandbox hides. Real servers (node scripts) in the real sandbox.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { containment, DEFAULT_SANDBOX_POLICY } from '../../src/core/exec/sandbox.js';
import { SandboxedStdioTransport, stderrReason } from '../../src/core/mcp/stdio-transport.js';
import { ownFolders, serverSandbox } from '../../src/core/mcp/toolbox.js';
import { removeBoard, tempBoard } from '../helpers/agent-wait.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) removeBoard(dir);
});

function tempDir(): string {
  const dir = tempBoard('autoteam-stdio-exit-');
  dirs.push(dir);
  return dir;
}

/** Starts `script` with node (or `command`) as a server of a sandbox hiding `hidden`, and says how it ended once it has. */
async function exitOf(script: string | string[], hidden: string[], command = process.execPath): Promise<string> {
  const folder = tempDir();
  const args = typeof script === 'string' ? [script] : script;
  const sandbox = serverSandbox({ folder, hidden, network: false, policy: DEFAULT_SANDBOX_POLICY, own: ownFolders(command, args) });
  const transport = new SandboxedStdioTransport({ command, args, env: {}, sandbox, secrets: [] });
  const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
  await transport.start();
  await closed;
  return transport.describeExit();
}

describe('why a stdio MCP server stopped', () => {
  it('is the line that names the error, not the runtime version printed after it', () => {
    const node = [
      'file:///srv/server.mjs:3',
      "throw new Error('the database is not there');",
      '^',
      '',
      'Error: the database is not there',
      '    at file:///srv/server.mjs:3:7',
      '    at ModuleJob.run (node:internal/modules/esm/module_job:195:25)',
      '',
      'Node.js v20.20.2',
      '',
    ].join('\n');
    expect(stderrReason(node)).toBe('Error: the database is not there');
    const python = ['Traceback (most recent call last):', '  File "/srv/server.py", line 1, in <module>', '    import mcp', "ModuleNotFoundError: No module named 'mcp'"].join('\n');
    expect(stderrReason(python)).toBe("ModuleNotFoundError: No module named 'mcp'");
    expect(stderrReason('listening…\nshutting down after the token expired\n')).toBe('shutting down after the token expired');
    expect(stderrReason('\n  \n')).toBeUndefined();
  });

  it('names the error of a real crashing node server', async () => {
    const dir = tempDir();
    const script = path.join(dir, 'crash.mjs');
    fs.writeFileSync(script, "throw new Error('the database is not there');\n");
    const said = await exitOf(script, []);
    expect(said).toBe('exited with code 1: Error: the database is not there');
  });

  it('says when the command is not there, not what the wrappers around it printed', async () => {
    const said = await exitOf('--stdio', [], 'no-such-mcp-server');
    expect(said).toBe("exited with code 127: the command 'no-such-mcp-server' was not found (not on the PATH the sandbox passes, or not executable)");
  });

  it('says when a relative path is not there: a server starts in its own folder', async () => {
    const said = await exitOf('tools/server.mjs', []);
    expect(said).toMatch(/^exited with code 1: Error: Cannot find module .*tools\/server\.mjs'; 'tools\/server\.mjs' is a relative path, and a server starts in its own folder \(\/.+\): give it from \/ instead$/);
  });

  it("does not take a shell script's text for a path", async () => {
    const said = await exitOf(['-c', 'node tools/server.mjs'], [], 'sh');
    expect(said).toMatch(/^exited with code 1: Error: Cannot find module .*tools\/server\.mjs'$/);
  });

  it.runIf(containment().kind === 'bwrap')('says when the server was started from a folder the sandbox hides (the board)', async () => {
    const board = tempDir();
    const script = path.join(board, 'server.mjs');
    fs.writeFileSync(script, 'setInterval(() => {}, 1000);\n');
    const said = await exitOf(script, [board]);
    expect(said).toMatch(/^exited with code 1: Error: Cannot find module/);
    expect(said).toContain(`; ${script} is inside ${board}, which the sandbox hides from MCP servers`);
    expect(said).not.toContain('Node.js v');
  });
});
