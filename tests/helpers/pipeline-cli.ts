/**
 * Runs the real built CLI (`node dist/cli/bundle/main.js …`, what `autoteam` runs) as a child process and reads what it left on
 * disk. The tests never build: run `npx tsc -p tsconfig.build.json` first (this helper fails with
 * that instruction when dist/ is missing or older than src/).
 *
 * The child's environment is the test's minus every ANTHROPIC_* / MODEL_ID / autoteam setting, so a
 * developer's key never turns an offline test into a paid one; `env` adds back what a test wants.
 * The child runs in the board's directory so that a `.env` in the repository is never loaded.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Task } from '../../src/core/board/schemas.js';
import { tempDir } from './temp-dirs.js';

const here = path.dirname(fileURLToPath(import.meta.url));
export const repoRoot = path.resolve(here, '..', '..');
export const cliEntry = path.join(repoRoot, 'dist', 'cli', 'bundle', 'main.js');

export const DOWNLOADS_REQUIREMENT = 'Write a Python script that organizes my Downloads folder by file type.';

/** Settings the CLI reads from the environment; cleared so that the caller's shell cannot change a run. */
const CLEARED = /^(ANTHROPIC_|MODEL_ID$|POLL_INTERVAL$|IDLE_TIMEOUT$|COMMAND_TIMEOUT$|MAX_TURNS$|MAX_REVISIONS$|MAX_QUESTIONS$|TOKEN_BUDGET$|ANSWER_TIMEOUT$|MAX_PIPELINE_STEPS$|TOKEN_BUDGET_PIPELINE$|AUTOTEAM_|SANDBOX_)/;

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/**
 * A run still going after this long has hung: it is killed, so that the test fails with its output
 * rather than at the test's own timeout (180 s). A whole pipeline takes seconds on a quiet machine.
 */
export const KILL_AFTER_MS = 170_000;

export interface CliOptions {
  cwd: string;
  env?: Record<string, string>;
  /** Kill the child after this long (a hung run must fail the test, not the whole suite); KILL_AFTER_MS by default. */
  killAfterMs?: number;
  /** Written to the child's stdin, which is then closed (without it stdin is ignored). */
  input?: string;
}

/** Throws a readable error when dist/ is missing or stale: the tests run the build, they do not make it. */
export function assertBuilt(): void {
  if (!fs.existsSync(cliEntry)) {
    throw new Error(`${path.relative(repoRoot, cliEntry)} is missing: run \`npx tsc -p tsconfig.build.json\` before these tests`);
  }
}

export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !CLEARED.test(name)) env[name] = value;
  }
  return { ...env, ...extra };
}

export function runCli(args: string[], options: CliOptions): Promise<CliResult> {
  assertBuilt();
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliEntry, ...args], {
      cwd: options.cwd,
      env: cleanEnv(options.env),
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    if (options.input !== undefined) child.stdin!.end(options.input);
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr!.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const killer = setTimeout(() => child.kill('SIGKILL'), options.killAfterMs ?? KILL_AFTER_MS);
    child.on('error', (error) => {
      clearTimeout(killer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(killer);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - started });
    });
  });
}

export function tempBoard(prefix = 'autoteam-run-'): string {
  return tempDir(prefix);
}

/** Every task file of the board, parsed, by id. Reads the files directly, as a person would. */
export function readTasks(root: string): Task[] {
  const dir = path.join(root, '.tasks');
  return fs
    .readdirSync(dir)
    .filter((name) => /^task_\d+\.json$/.test(name))
    .map((name) => JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')) as Task)
    .sort((a, b) => a.id - b.id);
}

export function sha256(file: string): string {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

/** All files under `dir` (recursively), as absolute paths. */
export function walk(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? walk(full) : [full];
  });
}

/** A short description of a failed run, for assertion messages. */
export function describeRun(result: CliResult): string {
  const tail = (text: string) => text.split('\n').slice(-40).join('\n');
  return `exit ${result.code}${result.signal ? ` (${result.signal})` : ''} after ${result.ms} ms\n--- stdout\n${tail(result.stdout)}\n--- stderr\n${tail(result.stderr)}`;
}
