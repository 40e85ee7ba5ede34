import fs from 'node:fs';
import path from 'node:path';
import type ts from 'typescript';
import { loadTypeScript } from './typescript.js';
import { AutoteamError } from '../errors.js';
import { type Language, languageOf } from './language.js';
import { runProcess } from './process.js';
import { STDLIB_ONLY } from './python.js';
import type { Sandbox } from './sandbox.js';
import { assertPlainFile, resolveInWorkspace, workspaceRelative } from './sandbox-path.js';

export interface LintProblem {
  line: number;
  rule: string;
  message: string;
}

export interface LintReport {
  file: string;
  language: Language;
  problems: LintProblem[];
  ok: boolean;
}

export interface LintOptions {
  signal?: AbortSignal;
  /** The task's sandbox: the Python helper runs in it like any process the agents cause. */
  sandbox?: Sandbox;
  timeoutMs?: number;
}

export const MAX_LINE_LENGTH = 120;

// Reads the file as bytes so PEP 263 encoding declarations are honoured, as the interpreter would.
const PYTHON_CHECK = `
import ast, json, sys
path = sys.argv[1]
with open(path, 'rb') as handle:
    source = handle.read()
try:
    tree = ast.parse(source, filename=path)
except SyntaxError as error:
    print(json.dumps({'syntaxError': {'line': error.lineno or 1, 'message': error.msg}}))
    sys.exit(0)
except ValueError as error:
    print(json.dumps({'syntaxError': {'line': 1, 'message': str(error)}}))
    sys.exit(0)
bare = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.ExceptHandler) and node.type is None]
print(json.dumps({'docstring': ast.get_docstring(tree) is not None, 'bareExcepts': bare}))
`;

interface PythonCheck {
  syntaxError?: { line: number; message: string };
  docstring?: boolean;
  bareExcepts?: number[];
}

/** Diagnostics that say the reviewer's machine lacks type packages, not that the code is wrong. */
const ENVIRONMENT_CODES = new Set([2580, 2591, 2592, 2593, 7016]);

function styleProblems(text: string): LintProblem[] {
  const problems: LintProblem[] = [];
  text.split(/\r?\n/).forEach((line, index) => {
    const lineNo = index + 1;
    if (line.length > MAX_LINE_LENGTH) {
      problems.push({ line: lineNo, rule: 'line-too-long', message: `line is ${line.length} characters (limit ${MAX_LINE_LENGTH})` });
    }
    if (/[ \t]+$/.test(line)) problems.push({ line: lineNo, rule: 'trailing-whitespace', message: 'trailing whitespace' });
    if (line.includes('\t')) problems.push({ line: lineNo, rule: 'tab', message: 'tab character (indent with spaces)' });
  });
  return problems;
}

async function pythonProblems(abs: string, cwd: string, options: LintOptions): Promise<LintProblem[]> {
  const result = await runProcess('python3', [...STDLIB_ONLY, '-c', PYTHON_CHECK, abs], {
    cwd,
    timeoutMs: options.timeoutMs ?? 30_000,
    maxOutputChars: 200_000,
    signal: options.signal,
    env: { PYTHONDONTWRITEBYTECODE: '1' },
    ...(options.sandbox ? { sandbox: options.sandbox } : {}),
  });
  let check: PythonCheck;
  try {
    check = JSON.parse(result.stdout) as PythonCheck;
  } catch {
    throw new AutoteamError(`python syntax check failed: ${result.error ?? (result.stderr || result.stdout || 'no output')}`, 'LINT_FAILED');
  }
  if (check.syntaxError) return [{ line: check.syntaxError.line, rule: 'syntax-error', message: check.syntaxError.message }];
  const problems: LintProblem[] = [];
  if (!check.docstring) problems.push({ line: 1, rule: 'module-docstring', message: 'missing module docstring' });
  for (const line of check.bareExcepts ?? []) {
    problems.push({ line, rule: 'bare-except', message: "bare 'except:' catches everything, even KeyboardInterrupt; name the exception" });
  }
  return problems;
}

function isBareSpecifier(message: string): boolean {
  const match = /Cannot find module '([^']+)'/.exec(message);
  return match !== null && !match[1]!.startsWith('.') && !match[1]!.startsWith('/');
}

/** TypeScript compiler diagnostics for one file: syntax only for JavaScript, syntax and types for TypeScript. */
async function typeScriptProblems(abs: string, language: 'javascript' | 'typescript'): Promise<LintProblem[]> {
  const ts = await loadTypeScript();
  const options: ts.CompilerOptions =
    language === 'javascript'
      ? { allowJs: true, noEmit: true, noLib: true, noResolve: true, types: [] }
      : {
          allowJs: true,
          noEmit: true,
          skipLibCheck: true,
          types: [],
          strict: true,
          target: ts.ScriptTarget.ES2022,
          module: ts.ModuleKind.ESNext,
          moduleResolution: ts.ModuleResolutionKind.Bundler,
          allowImportingTsExtensions: true,
          jsx: ts.JsxEmit.Preserve,
        };
  const program = ts.createProgram([abs], options);
  const source = program.getSourceFile(abs);
  if (!source) throw new AutoteamError(`TypeScript could not read '${abs}'`, 'LINT_FAILED');
  const diagnostics =
    language === 'javascript'
      ? program.getSyntacticDiagnostics(source)
      : [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)];
  const problems: LintProblem[] = [];
  for (const diagnostic of diagnostics) {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ');
    if (ENVIRONMENT_CODES.has(diagnostic.code)) continue;
    if ((diagnostic.code === 2307 || diagnostic.code === 2792) && isBareSpecifier(message)) continue;
    const line = diagnostic.start === undefined ? 1 : source.getLineAndCharacterOfPosition(diagnostic.start).line + 1;
    problems.push({ line, rule: `TS${diagnostic.code}`, message });
  }
  return problems;
}

function hasLeadingComment(text: string): boolean {
  const body = text.replace(/^#!.*\r?\n/, '').trimStart();
  return body.startsWith('//') || body.startsWith('/*');
}

/**
 * Lints one workspace file. Python: a real parse (syntax errors with their line), module docstring
 * and bare `except:` from the AST. JS/TS: TypeScript compiler diagnostics and a leading comment.
 * Both: lines over 120 characters, trailing whitespace, tabs.
 */
export async function lintFile(workspace: string, file: string, options: LintOptions = {}): Promise<LintReport> {
  const language = languageOf(file, 'lint');
  const abs = resolveInWorkspace(workspace, file);
  assertPlainFile(abs, file);
  const text = fs.readFileSync(abs, 'utf8');
  const problems = styleProblems(text);
  if (language === 'python') {
    problems.push(...(await pythonProblems(abs, path.resolve(workspace), options)));
  } else {
    problems.push(...(await typeScriptProblems(abs, language)));
    if (!hasLeadingComment(text)) {
      problems.push({ line: 1, rule: 'leading-comment', message: 'missing leading comment saying what the file is for' });
    }
  }
  problems.sort((a, b) => a.line - b.line || a.rule.localeCompare(b.rule));
  return { file: workspaceRelative(workspace, abs), language, problems, ok: problems.length === 0 };
}

export function lintSummary(report: LintReport): string {
  const count = report.problems.length;
  return `${report.file}: ${count === 0 ? 'no problems' : `${count} problem${count === 1 ? '' : 's'}`}`;
}

/** `organize.py: 1 problem` then one indented line per problem, at most `limit` of them. */
export function formatLintReport(report: LintReport, limit = 50): string {
  const lines = [lintSummary(report)];
  for (const problem of report.problems.slice(0, limit)) lines.push(`  line ${problem.line} [${problem.rule}] ${problem.message}`);
  if (report.problems.length > limit) lines.push(`  …and ${report.problems.length - limit} more`);
  return lines.join('\n');
}
