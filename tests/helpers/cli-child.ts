/**
 * The built CLI as a long-lived child process (`autoteam events --follow`, `autoteam worker`): its
 * output read line by line as it comes, waits for the line a test needs (with a generous ceiling),
 * and a signal to stop it that resolves with how it exited.
 *
 * ```ts
 * const follower = CliChild.start(['events', '--follow', '--json', '--dir', root], { cwd: root });
 * await follower.waitForLine((line) => line.includes('"task_posted"'), 'the first task posted');
 * expect(await follower.stop('SIGTERM')).toEqual({ code: 0, signal: null });
 * ```
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { cleanEnv, cliEntry, assertBuilt } from './pipeline-cli.js';

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export class CliChild {
  readonly lines: string[] = [];
  stderr = '';
  private partial = '';
  private readonly listeners = new Set<() => void>();
  readonly exited: Promise<ChildExit>;

  private constructor(readonly child: ChildProcess) {
    child.stdout!.setEncoding('utf8').on('data', (text: string) => {
      const parts = (this.partial + text).split('\n');
      this.partial = parts.pop()!;
      this.lines.push(...parts);
      this.wake();
    });
    child.stderr!.setEncoding('utf8').on('data', (text: string) => {
      this.stderr += text;
      this.wake();
    });
    this.exited = new Promise((resolve) => {
      child.on('close', (code, signal) => {
        if (this.partial) this.lines.push(this.partial);
        this.partial = '';
        this.wake();
        resolve({ code, signal });
      });
    });
  }

  /** `stdin: 'pipe'` keeps its input open (a line-mode REPL, which quits at the end of its input); `write` types into it. */
  static start(args: string[], options: { cwd: string; env?: Record<string, string>; stdin?: 'pipe' }): CliChild {
    assertBuilt();
    return new CliChild(spawn(process.execPath, [cliEntry, ...args], { cwd: options.cwd, env: cleanEnv(options.env), stdio: [options.stdin ?? 'ignore', 'pipe', 'pipe'] }));
  }

  /** Types a line into a child started with `stdin: 'pipe'`. */
  write(line: string): void {
    this.child.stdin!.write(`${line}\n`);
  }

  get pid(): number {
    return this.child.pid!;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Resolves with the first line (from the start) that `match` accepts; fails when the child exits first or the ceiling passes. */
  waitForLine(match: (line: string) => boolean, what: string, ceilingMs = 120_000): Promise<string> {
    return this.waitFor(() => this.lines.find(match), what, ceilingMs);
  }

  /** Resolves when `ready` returns something other than undefined, re-checked on every output of the child. */
  waitFor<T>(ready: () => T | undefined, what: string, ceilingMs = 120_000): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const value = ready();
        if (value !== undefined) return finish(() => resolve(value));
        if (!this.running) finish(() => reject(new Error(`the child exited before ${what}\n${this.describe()}`)));
      };
      const timer = setTimeout(() => finish(() => reject(new Error(`gave up waiting for ${what}\n${this.describe()}`))), ceilingMs);
      const finish = (settle: () => void) => {
        clearTimeout(timer);
        this.listeners.delete(check);
        settle();
      };
      this.listeners.add(check);
      check();
    });
  }

  /** Sends `signal` and resolves with how the child exited (SIGKILL after the ceiling, so a hung child fails the test). */
  async stop(signal: NodeJS.Signals = 'SIGTERM', ceilingMs = 60_000): Promise<ChildExit> {
    if (this.running) this.child.kill(signal);
    const killer = setTimeout(() => this.child.kill('SIGKILL'), ceilingMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(killer);
    }
  }

  describe(): string {
    const tail = (text: string) => text.split('\n').slice(-30).join('\n');
    return `--- stdout\n${tail(this.lines.join('\n'))}\n--- stderr\n${tail(this.stderr)}`;
  }

  private wake(): void {
    for (const listener of [...this.listeners]) listener();
  }
}
