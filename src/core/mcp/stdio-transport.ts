import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { isInside } from '../exec/bwrap-profile.js';
import type { RunCgroup } from '../exec/pids-cgroup.js';
import { runMarkers, sweep } from '../exec/process.js';
import type { Sandbox } from '../exec/sandbox.js';
import { setSessionNiceness } from '../exec/session-niceness.js';
import { redact } from '../trace/redact.js';
import { within } from '../within.js';

/** Characters of the server's stderr kept, for the error that says why it stopped. */
const STDERR_TAIL = 2_000;
/** How long a server has to exit by itself once its stdin is closed, before it is killed. */
const GRACE_MS = 1_000;

export interface StdioLaunch {
  command: string;
  args: readonly string[];
  /** The server's own variables (its config's `env`, expanded); nothing else of the person's. */
  env: Record<string, string>;
  /** The sandbox it runs in: the teammate's profile around the server's own folder. */
  sandbox: Sandbox;
  /** Values to keep out of what is said about the server (its env's secrets). */
  secrets: readonly string[];
}

/**
 * An MCP stdio transport whose server runs in a teammate's sandbox. The SDK's StdioClientTransport
 * merges the person's HOME, USER, SHELL and LOGNAME into the server's environment and starts the
 * command as it is; this one starts it wrapped like the teammate's `bash` (bubblewrap, the limits,
 * a pids cgroup), with the allow-listed environment plus the server's own variables, in its own
 * process group marked for the sweeps, and kills the whole tree when it is closed.
 */
export class SandboxedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child: ChildProcessWithoutNullStreams | null = null;
  private readonly buffer = new ReadBuffer();
  private readonly marker = randomUUID();
  private cgroup: RunCgroup | null = null;
  private stderrTail = '';
  private exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  private exited: Promise<void> = Promise.resolve();

  constructor(private readonly launch: StdioLaunch) {}

  async start(): Promise<void> {
    const { sandbox } = this.launch;
    const env = { ...sandbox.env(this.launch.env), ...runMarkers(this.marker) };
    this.cgroup = await sandbox.openCgroup();
    // Started detached below: a session of its own, with no controlling terminal.
    const wrapped = sandbox.command(this.launch.command, this.launch.args, this.cgroup, { detached: true });
    return new Promise((resolve, reject) => {
      const child = spawn(wrapped.command, wrapped.args, { cwd: sandbox.workspace, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
      this.child = child;
      this.exited = new Promise((done) => child.once('close', () => done()));
      child.once('error', (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.once('spawn', () => {
        // Detached, the server is a session of its own: one below the runtime, as the code's is.
        if (child.pid !== undefined) void setSessionNiceness(child.pid, wrapped.niceness, () => this.child === child);
        resolve();
      });
      child.stdout.on('data', (chunk: Buffer) => {
        try {
          this.buffer.append(chunk);
        } catch (error) {
          // One message past 10 MB: the server is stopped rather than held in memory.
          this.onerror?.(error as Error);
          this.killTree(child);
          return;
        }
        this.drain();
      });
      child.stderr.setEncoding('utf8').on('data', (text: string) => {
        this.stderrTail = (this.stderrTail + text).slice(-STDERR_TAIL);
      });
      // A server that died mid-write: the close below tells it.
      child.stdin.on('error', () => undefined);
      child.once('close', (code, signal) => {
        this.exit = { code, signal };
        this.child = null;
        // What the server left behind (a child that left its group) goes with it.
        this.killTree(child);
        void this.cgroup?.remove();
        this.onclose?.();
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const child = this.child;
    if (!child) return Promise.reject(new Error('the server is not running'));
    return new Promise((resolve) => {
      if (child.stdin.write(serializeMessage(message))) resolve();
      else child.stdin.once('drain', () => resolve());
    });
  }

  /** Closes stdin (a server ends on end-of-file), then kills the tree if it is still there. */
  async close(): Promise<void> {
    const child = this.child;
    if (child) {
      child.stdin.end();
      await within(this.exited, GRACE_MS, undefined);
      if (this.child) this.killTree(child);
      await this.exited;
    }
    await this.cgroup?.remove();
    this.buffer.clear();
  }

  /**
   * How it ended, with the line of its stderr that says why (redacted), and where a file it was
   * started with is out of the sandbox's sight, that — for the error the model and the person read.
   */
  describeExit(): string {
    const how = !this.exit ? 'stopped' : this.exit.signal ? `was killed by ${this.exit.signal}` : `exited with code ${this.exit.code}`;
    const stderr = redact(this.stderrTail, this.launch.secrets);
    // Exit 127 from the wrappers (prlimit, bubblewrap, a shell): the command itself is not there.
    const missing = this.exit?.code === 127 && /failed to execute|execvp|No such file or directory|not found/.test(stderr);
    const reason = missing ? `the command '${this.launch.command}' was not found (not on the PATH the sandbox passes, or not executable)` : stderrReason(stderr);
    const hint = this.exit ? (hiddenFile(this.launch) ?? relativeFile(this.launch)) : null;
    return [reason ? `${how}: ${reason.slice(0, 300)}` : how, hint].filter(Boolean).join('; ');
  }

  private drain(): void {
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.buffer.readMessage();
      } catch (error) {
        // A line that is not JSON-RPC (a server printing to stdout) is reported, not fatal.
        this.onerror?.(error as Error);
        continue;
      }
      if (message === null) return;
      this.onmessage?.(message);
    }
  }

  private killTree(child: ChildProcessWithoutNullStreams): void {
    if (child.pid !== undefined) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    sweep(this.marker);
    this.cgroup?.killAll();
  }
}

/** Lines of a crash report that say nothing of why: Node's version, stack frames, the source line's caret, braces. */
const NOISE = /^(Node\.js v\d|\s+at |\s*[\^~{}[\]]*\s*$|\s*(code|errno|syscall|path|requireStack): )/;
/** A line that names the error: `Error: …`, `ModuleNotFoundError: …`, `error: …`, `fatal: …`. */
const ERROR_LINE = /^\s*([\w.]*(Error|Exception)\b.*:|(error|fatal|panic)\b)/i;

/**
 * The line of a stopped server's stderr that says why: the last one naming an error (Node prints its
 * version after the error, Python its traceback before), else the last one that is not noise.
 */
export function stderrReason(stderr: string): string | undefined {
  const lines = stderr.split('\n').map((line) => line.trimEnd()).filter((line) => line.trim() && !NOISE.test(line));
  return (lines.findLast((line) => ERROR_LINE.test(line)) ?? lines.at(-1))?.trim();
}

/**
 * A relative path among the arguments that is not there: a server starts in its own folder, not in
 * the project's, as a `.mcp.json` habit expects.
 */
function relativeFile(launch: StdioLaunch): string | null {
  const cwd = launch.sandbox.workspace;
  // A word with blanks is a script's text (`sh -c '…'`), not a path.
  const given = launch.args.find((arg) => !path.isAbsolute(arg) && !arg.startsWith('-') && !/\s/.test(arg) && /[/\\]|\.(c?js|mjs|ts|py)$/.test(arg) && !fs.existsSync(path.join(cwd, arg)));
  return given ? `'${given}' is a relative path, and a server starts in its own folder (${cwd}): give it from / instead` : null;
}

/**
 * A file the server was started with that bubblewrap hides (inside the board, the repository, the
 * start folder or the home directory): said, since "cannot find module" alone does not say why.
 */
function hiddenFile(launch: StdioLaunch): string | null {
  if (launch.sandbox.kind !== 'bwrap') return null;
  const hidden = [...launch.sandbox.options.hidden, os.homedir()].map((dir) => path.resolve(dir));
  for (const given of [launch.command, ...launch.args]) {
    if (!path.isAbsolute(given)) continue;
    const dir = hidden.find((candidate) => isInside(candidate, path.resolve(given)));
    if (dir) return `${given} is inside ${dir}, which the sandbox hides from MCP servers (put the server in a folder of its own, outside it)`;
  }
  return null;
}
