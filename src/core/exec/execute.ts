import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { loadTypeScript } from './typescript.js';
import { type Language, nodeStripsTypes } from './language.js';
import { type ProcessResult, runProcess } from './process.js';
import type { Sandbox } from './sandbox.js';

export interface ExecuteOptions {
  language?: Language;
  /** Run inside this sandbox (its workspace should be `workspace`). */
  sandbox?: Sandbox;
  timeoutMs: number;
  maxOutputChars: number;
  signal?: AbortSignal;
}

export interface ExecuteResult extends ProcessResult {
  language: Language;
}

const PYTHON_HINTS = [
  /^\s*def \w+\s*\(/m,
  /^\s*import [\w.]+(\s*,\s*[\w.]+)*(\s+as\s+\w+)?\s*$/m,
  /^\s*from [\w.]+ import /m,
  /\bprint\(/,
  // A block header ending in a colon: JavaScript puts a brace there.
  /^\s*(if|elif|else|for|while|try|except|finally|with|class)\b[^{;]*:\s*$/m,
];

const TYPESCRIPT_HINTS = [/^\s*(export\s+)?(interface|type)\s+\w+/m, /[\w)]\s*:\s*(string|number|boolean|void|unknown|any)\b/];

/**
 * Python if the code looks like Python (`def f(`, `import os`, `print(`, `while x:`), TypeScript if it
 * has type annotations or declarations, else JavaScript.
 */
export function guessLanguage(code: string): Language {
  if (PYTHON_HINTS.some((hint) => hint.test(code))) return 'python';
  return TYPESCRIPT_HINTS.some((hint) => hint.test(code)) ? 'typescript' : 'javascript';
}

/**
 * Runs a snippet with python3 or node from a temporary file in `<workspace>/.run/`, with the
 * workspace as working directory and no secrets in the environment. TypeScript runs natively where
 * Node strips types, otherwise after a TypeScript transpile (no type check).
 */
export async function executeCode(workspace: string, code: string, options: ExecuteOptions): Promise<ExecuteResult> {
  const language = options.language ?? guessLanguage(code);
  const runDir = path.join(path.resolve(workspace), '.run');
  fs.mkdirSync(runDir, { recursive: true });
  const id = randomUUID().slice(0, 8);
  let program = 'node';
  const args: string[] = [];
  let file: string;
  if (language === 'python') {
    program = 'python3';
    file = path.join(runDir, `snippet-${id}.py`);
    fs.writeFileSync(file, code);
  } else if (language === 'typescript' && nodeStripsTypes()) {
    file = path.join(runDir, `snippet-${id}.mts`);
    fs.writeFileSync(file, code);
    args.push('--experimental-strip-types');
  } else {
    // CommonJS only for a snippet that uses require() and no import statement; ESM allows top-level await.
    const commonJs = language === 'javascript' && /\brequire\(/.test(code) && !/^\s*import\s/m.test(code);
    file = path.join(runDir, `snippet-${id}.${commonJs ? 'cjs' : 'mjs'}`);
    const ts = language === 'typescript' ? await loadTypeScript() : null;
    const source = ts
        ? ts.transpileModule(code, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText
        : code;
    fs.writeFileSync(file, source);
  }
  try {
    const result = await runProcess(program, [...args, file], {
      cwd: path.resolve(workspace),
      timeoutMs: options.timeoutMs,
      maxOutputChars: options.maxOutputChars,
      signal: options.signal,
      ...(language === 'python' ? { env: { PYTHONDONTWRITEBYTECODE: '1' } } : {}),
      ...(options.sandbox ? { sandbox: options.sandbox } : {}),
    });
    return { ...result, language };
  } finally {
    fs.rmSync(file, { force: true });
  }
}
