import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { loadTypeScript } from './typescript.js';
import { type Language, languageOf, nodeStripsTypes } from './language.js';
import { type ProcessResult, runProcess } from './process.js';
import type { Sandbox } from './sandbox.js';
import { assertPlainFile, listWorkspaceFiles, resolveInWorkspace, workspaceRelative } from './sandbox-path.js';
import { scratchDir } from './scratch.js';

export type TestMode = 'unittest' | 'node-test' | 'smoke' | 'project';

export interface TestRunOptions {
  timeoutMs: number;
  maxOutputChars: number;
  signal?: AbortSignal;
  /** The task's sandbox: the engineer's tests run in it, a smoke run in the same containment around its scratch copy. */
  sandbox?: Sandbox;
  /** Run the project's own test command when the workspace is a repository that has one. */
  project?: boolean;
}

export interface TestRunResult {
  file: string;
  ok: boolean;
  mode: TestMode;
  command: string;
  exitCode: number | null;
  /** What the run printed (stdout then stderr), plus notes such as the smoke run's files afterwards. */
  output: string;
  durationMs: number;
}

const PYTHON_TEST = /(^test_.*|_test)\.py$/;
const SCRIPT_TEST = /\.test\.(js|mjs|cjs|ts)$/;
const SAMPLE_FILES: Record<string, string | Buffer> = {
  'a.txt': 'sample text file\n',
  'b.jpg': Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0xff, 0xd9]),
  'c.pdf': '%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n',
  'd.py': 'print("sample python file")\n',
};
const SIBLING_EXTENSIONS: Record<Language, RegExp> = {
  python: /\.py$/,
  javascript: /\.(js|mjs|cjs|json)$/,
  typescript: /\.(ts|tsx|js|mjs|cjs|json)$/,
};
const PYTHON_ENV = { PYTHONDONTWRITEBYTECODE: '1' };

function combined(result: ProcessResult): string {
  if (result.error) return result.error;
  const parts = [result.stdout, result.stderr].filter(Boolean);
  if (result.timedOut) parts.push(`[timed out after ${result.durationMs} ms; the process was killed]`);
  return parts.join('\n') || '(no output)';
}

function passed(result: ProcessResult): boolean {
  return result.exitCode === 0 && !result.timedOut && !result.canceled && !result.error;
}

function listTree(dir: string, depth = 2): string[] {
  const out: string[] = [];
  const walk = (current: string, level: number): void => {
    for (const entry of fs.readdirSync(current, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const rel = path.relative(dir, path.join(current, entry.name)).split(path.sep).join('/');
      if (entry.isDirectory()) {
        out.push(`${rel}/`);
        if (level < depth) walk(path.join(current, entry.name), level + 1);
      } else {
        out.push(rel);
      }
    }
  };
  walk(dir, 1);
  return out;
}

async function runEngineerTests(workspace: string, file: string, language: Language, tests: string[], options: TestRunOptions): Promise<TestRunResult> {
  const started = Date.now();
  const base = { file, exitCode: null, durationMs: 0 };
  if (language === 'python') {
    const patterns = [tests.some((t) => /(^|\/)test_[^/]*$/.test(t)) ? 'test_*.py' : null, tests.some((t) => t.endsWith('_test.py')) ? '*_test.py' : null];
    const outputs: string[] = [];
    const commands: string[] = [];
    let ok = true;
    let exitCode: number | null = 0;
    for (const pattern of patterns.filter((p): p is string => p !== null)) {
      const args = ['-m', 'unittest', 'discover', '-s', workspace, '-p', pattern, '-v'];
      commands.push(`python3 -m unittest discover -s ${workspace} -p '${pattern}' -v`);
      const result = await runProcess('python3', args, { cwd: workspace, timeoutMs: options.timeoutMs, maxOutputChars: options.maxOutputChars, signal: options.signal, env: PYTHON_ENV, sandbox: options.sandbox });
      outputs.push(combined(result));
      if (!passed(result)) {
        ok = false;
        exitCode = result.exitCode;
      }
    }
    return { ...base, ok, mode: 'unittest', command: commands.join(' && '), exitCode, output: outputs.join('\n'), durationMs: Date.now() - started };
  }
  let runnable = tests;
  const notes: string[] = [];
  const typed = tests.filter((t) => t.endsWith('.ts'));
  const args = ['--test'];
  if (typed.length > 0) {
    if (nodeStripsTypes()) args.unshift('--experimental-strip-types');
    else {
      runnable = tests.filter((t) => !t.endsWith('.ts'));
      notes.push(
        `cannot run ${typed.join(', ')}: Node ${process.version} has no --experimental-strip-types (Node ≥ 22.6 does); write tests as .test.mjs instead`,
      );
    }
  }
  if (runnable.length === 0) {
    return { ...base, ok: false, mode: 'node-test', command: `node --test ${typed.join(' ')}`, output: notes.join('\n'), durationMs: Date.now() - started };
  }
  const result = await runProcess('node', [...args, ...runnable], { cwd: workspace, timeoutMs: options.timeoutMs, maxOutputChars: options.maxOutputChars, signal: options.signal, sandbox: options.sandbox });
  return {
    ...base,
    ok: passed(result) && notes.length === 0,
    mode: 'node-test',
    command: ['node', ...args, ...runnable].join(' '),
    exitCode: result.exitCode,
    output: [combined(result), ...notes].join('\n'),
    durationMs: result.durationMs,
  };
}

async function smokeRun(workspace: string, abs: string, file: string, language: Language, options: TestRunOptions): Promise<TestRunResult> {
  const scratch = scratchDir('smoke');
  try {
    // Siblings come along so a script that imports a helper module still runs.
    const dir = path.dirname(abs);
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isFile() || !SIBLING_EXTENSIONS[language].test(entry.name)) continue;
      if (fs.lstatSync(path.join(dir, entry.name)).nlink !== 1) continue;
      fs.copyFileSync(path.join(dir, entry.name), path.join(scratch, entry.name));
    }
    // Copied by the runtime, outside the sandbox: only plain files, never through a link.
    const pkg = fs.lstatSync(path.join(workspace, 'package.json'), { throwIfNoEntry: false });
    if (language !== 'python' && pkg?.isFile() && pkg.nlink === 1) {
      fs.copyFileSync(path.join(workspace, 'package.json'), path.join(scratch, 'package.json'));
    }
    for (const [name, content] of Object.entries(SAMPLE_FILES)) {
      if (!fs.existsSync(path.join(scratch, name))) fs.writeFileSync(path.join(scratch, name), content);
    }
    let script = path.basename(abs);
    const notes: string[] = [];
    let program = 'python3';
    const flags: string[] = [];
    if (language !== 'python') program = 'node';
    if (language === 'typescript') {
      if (nodeStripsTypes()) flags.push('--experimental-strip-types');
      else {
        const ts = await loadTypeScript();
        const output = ts.transpileModule(fs.readFileSync(abs, 'utf8'), {
          compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, jsx: ts.JsxEmit.ReactJSX },
          fileName: script,
        });
        script = script.replace(/\.tsx?$/, '.mjs');
        fs.writeFileSync(path.join(scratch, script), output.outputText);
        notes.push(`(transpiled to ${script} with TypeScript: Node ${process.version} cannot run .ts files directly)`);
      }
    }
    const args = [...flags, script, scratch];
    const result = await runProcess(program, args, {
      cwd: scratch,
      timeoutMs: options.timeoutMs,
      maxOutputChars: options.maxOutputChars,
      signal: options.signal,
      ...(language === 'python' ? { env: PYTHON_ENV } : {}),
      ...(options.sandbox ? { sandbox: options.sandbox.forWorkspace(scratch) } : {}),
    });
    const after = listTree(scratch);
    const output = [...notes, combined(result), `files in the scratch directory after the run: ${after.join(', ') || '(none)'}`].join('\n');
    return {
      file,
      ok: passed(result),
      mode: 'smoke',
      command: [program, ...args].join(' '),
      exitCode: result.exitCode,
      output,
      durationMs: result.durationMs,
    };
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

let pytest: boolean | undefined;

/**
 * The repository's own test command, or null: `npm test` when package.json has a test script (not
 * npm's placeholder) and the dependencies are installed in the workspace (a fresh worktree has no
 * `node_modules`, and a script that cannot find its tools proves nothing about the change), else
 * pytest (or unittest when pytest is not installed) when there is a `tests/` or `test/` folder
 * holding Python files.
 */
export function projectTestCommand(workspace: string): { command: string; args: string[] } | null {
  const pkg = path.join(workspace, 'package.json');
  if (fs.existsSync(pkg) && fs.existsSync(path.join(workspace, 'node_modules'))) {
    try {
      const script = (JSON.parse(fs.readFileSync(pkg, 'utf8')) as { scripts?: Record<string, unknown> }).scripts?.test;
      if (typeof script === 'string' && script.trim() && !/no test specified/.test(script)) return { command: 'npm', args: ['test', '--silent'] };
    } catch {
      // An unreadable package.json has no test script we could run.
    }
  }
  for (const folder of ['tests', 'test']) {
    const dir = path.join(workspace, folder);
    if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) continue;
    if (!fs.readdirSync(dir).some((name) => name.endsWith('.py'))) continue;
    pytest ??= spawnSync('python3', ['-c', 'import pytest'], { stdio: 'ignore', env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } }).status === 0;
    return pytest ? { command: 'python3', args: ['-m', 'pytest', '-q', folder] } : { command: 'python3', args: ['-m', 'unittest', 'discover', '-s', folder, '-t', '.', '-v'] };
  }
  return null;
}

async function runProjectTests(workspace: string, file: string, project: { command: string; args: string[] }, options: TestRunOptions): Promise<TestRunResult> {
  const started = Date.now();
  const result = await runProcess(project.command, project.args, {
    cwd: workspace,
    timeoutMs: options.timeoutMs,
    maxOutputChars: options.maxOutputChars,
    signal: options.signal,
    env: PYTHON_ENV,
    sandbox: options.sandbox,
  });
  return {
    file,
    ok: passed(result),
    mode: 'project',
    command: [project.command, ...project.args].join(' '),
    exitCode: result.exitCode,
    output: combined(result),
    durationMs: Date.now() - started,
  };
}

/**
 * Tests a submitted file for real. Tests the engineer wrote (test_*.py / *_test.py; *.test.js|mjs|ts)
 * are run with unittest or `node --test`; without them, a smoke run executes a copy of the file in a
 * scratch directory holding a few sample files (the directory is also argv[1]). Pass = exit status 0.
 */
export async function runTests(workspace: string, file: string, options: TestRunOptions): Promise<TestRunResult> {
  const abs = resolveInWorkspace(workspace, file);
  assertPlainFile(abs, file);
  if (!fs.statSync(abs).isFile()) throw Object.assign(new Error(`'${file}' is not a file`), { code: 'EISDIR' });
  const rel = workspaceRelative(workspace, abs);
  const project = options.project ? projectTestCommand(path.resolve(workspace)) : null;
  if (project) return runProjectTests(path.resolve(workspace), rel, project, options);
  const language = languageOf(file, 'test');
  const pattern = language === 'python' ? PYTHON_TEST : SCRIPT_TEST;
  const tests = listWorkspaceFiles(workspace, 2_000).filter((f) => pattern.test(path.posix.basename(f)));
  if (tests.length > 0) return runEngineerTests(path.resolve(workspace), rel, language, tests, options);
  return smokeRun(path.resolve(workspace), abs, rel, language, options);
}

export function testSummary(result: TestRunResult): string {
  const kind = result.mode === 'smoke' ? 'smoke run' : result.mode === 'project' ? `the project's tests: ${result.command}` : `${result.mode} tests`;
  return `${result.file}: ${result.ok ? 'PASS' : 'FAIL'} (${kind}, exit ${result.exitCode ?? 'none'})`;
}

export function formatTestResult(result: TestRunResult): string {
  return `${testSummary(result)}\n$ ${result.command}\n${result.output}`;
}
