import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { offlineEnv } from './repl-cli.js';
import { HANG_MS } from './agent-wait.js';
import { waitUntil } from './repl-session.js';

export function tmuxPath(): string | null {
  const found = spawnSync('sh', ['-c', 'command -v tmux'], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() : null;
}

/** One program in a detached tmux session on a private server (-L), so it never touches the user's tmux. */
export class TmuxScreen {
  readonly socket = `autoteam-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  readonly exitFile: string;

  constructor(
    readonly dir: string,
    private readonly size = { columns: 120, rows: 50 },
  ) {
    this.exitFile = path.join(dir, 'exit-code');
  }

  private tmux(...args: string[]): string {
    return execFileSync('tmux', ['-L', this.socket, '-f', '/dev/null', ...args], { encoding: 'utf8', env: offlineEnv() });
  }

  /** Starts `argv` in the board dir; its exit code lands in `exitFile`. */
  start(argv: string[]): void {
    const quoted = argv.map((arg) => `'${arg.replaceAll("'", "'\\''")}'`).join(' ');
    const command = `cd '${this.dir}' && env ANTHROPIC_API_KEY= ANTHROPIC_AUTH_TOKEN= ${quoted}; echo $? > '${this.exitFile}'`;
    this.tmux('new-session', '-d', '-s', 'repl', '-x', String(this.size.columns), '-y', String(this.size.rows), command);
    this.tmux('set-option', '-t', 'repl', 'remain-on-exit', 'on');
    // REPL_TMUX_RAW=1 keeps the raw bytes the program wrote (raw.log in the board dir), for debugging the screen.
    if (process.env.REPL_TMUX_RAW) this.tmux('pipe-pane', '-t', 'repl', `cat >> '${path.join(this.dir, 'raw.log')}'`);
  }

  /** Types text, then Enter as a separate key, as a person would. */
  /** Types `text`, then Enter unless `enter` is false. */
  type(text: string, enter = true): void {
    this.tmux('send-keys', '-t', 'repl', '-l', text);
    if (enter) this.tmux('send-keys', '-t', 'repl', 'Enter');
  }

  /** Pastes text as a terminal does: tmux brackets it (ESC[200~ … ESC[201~) when the program asked for that. */
  paste(text: string): void {
    this.tmux('set-buffer', '-b', 'paste', text);
    this.tmux('paste-buffer', '-p', '-d', '-b', 'paste', '-t', 'repl');
  }

  key(name: string): void {
    this.tmux('send-keys', '-t', 'repl', name);
  }

  /** The visible screen, or with `history` the scrollback too. */
  capture(history = false): string {
    return this.tmux('capture-pane', '-p', '-t', 'repl', ...(history ? ['-S', '-'] : []));
  }

  /** The visible screen with its colours and attributes, as escape sequences. */
  captureStyled(): string {
    return this.tmux('capture-pane', '-p', '-e', '-t', 'repl');
  }

  async waitFor(pattern: RegExp | string, what: string, timeoutMs = HANG_MS, history = false): Promise<string> {
    try {
      return await waitUntil(() => {
        const screen = this.capture(history);
        return (typeof pattern === 'string' ? screen.includes(pattern) : pattern.test(screen)) ? screen : null;
      }, what, timeoutMs);
    } catch (error) {
      throw new Error(`${(error as Error).message}\n--- screen ---\n${this.capture(true)}`);
    }
  }

  async exitCode(timeoutMs = HANG_MS): Promise<number> {
    try {
      const text = await waitUntil(() => (fs.existsSync(this.exitFile) ? fs.readFileSync(this.exitFile, 'utf8').trim() : null), 'the program to exit', timeoutMs);
      return Number(text);
    } catch (error) {
      throw new Error(`${(error as Error).message}\n--- screen ---\n${this.capture(true)}`);
    }
  }

  kill(): void {
    spawnSync('tmux', ['-L', this.socket, 'kill-server'], { stdio: 'ignore' });
    // tmux leaves the socket file of a killed server behind.
    const uid = process.getuid?.() ?? 0;
    fs.rmSync(path.join(process.env.TMUX_TMPDIR ?? '/tmp', `tmux-${uid}`, this.socket), { force: true });
  }
}
