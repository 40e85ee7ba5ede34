import fs from 'node:fs';
import path from 'node:path';
import type { Node, SourceFile } from 'typescript';
import { loadTypeScript } from './typescript.js';
import { AutoteamError } from '../errors.js';
import { type Language, languageOf } from './language.js';
import { runProcess } from './process.js';
import { STDLIB_ONLY } from './python.js';
import type { Sandbox } from './sandbox.js';
import { assertPlainFile, resolveInWorkspace, workspaceRelative } from './sandbox-path.js';

export interface UnitComplexity {
  name: string;
  line: number;
  /** if / elif / else-if / ternary / except-catch / case arms. */
  branches: number;
  /** for / while / do loops and comprehension generators. */
  loops: number;
  /** `and` `or` / `&&` `||` `??` operators, each a decision point of its own. */
  boolOps: number;
  /** Deepest nesting of control blocks (if, loops, try, with, match/switch); `elif` does not nest. */
  maxNesting: number;
  /** McCabe: 1 + branches + loops + boolOps. */
  cyclomatic: number;
}

export interface ComplexityReport {
  file: string;
  language: Language;
  functions: UnitComplexity[];
  /** Code outside any function (scripts often keep their logic there). */
  module: UnitComplexity;
  totals: { functions: number; branches: number; loops: number; cyclomatic: number; maxCyclomatic: number };
  maxNesting: number;
}

export const HIGH_CYCLOMATIC = 10;
export const HIGH_NESTING = 4;

type Counts = Omit<UnitComplexity, 'cyclomatic'>;
type TypeScript = typeof import('typescript');

// Functions nest their names (Outer.method.inner); lambdas count toward the function around them.
const PYTHON_COMPLEXITY = `
import ast, json, sys
path = sys.argv[1]
with open(path, 'rb') as handle:
    source = handle.read()
try:
    tree = ast.parse(source, filename=path)
except (SyntaxError, ValueError) as error:
    print(json.dumps({'error': {'line': getattr(error, 'lineno', None) or 1, 'message': getattr(error, 'msg', str(error))}}))
    sys.exit(0)
FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
LOOPS = (ast.For, ast.AsyncFor, ast.While)
BLOCKS = LOOPS + (ast.If, ast.Try, ast.With, ast.AsyncWith) + tuple(
    getattr(ast, name) for name in ('TryStar', 'Match') if hasattr(ast, name))
functions = []
def unit(name, line):
    return {'name': name, 'line': line, 'branches': 0, 'loops': 0, 'boolOps': 0, 'maxNesting': 0}
def visit(node, stats, depth, prefix, parent):
    if isinstance(node, FUNCS):
        inner = unit(prefix + node.name, node.lineno)
        functions.append(inner)
        for child in node.body:
            visit(child, inner, 0, prefix + node.name + '.', node)
        for child in node.decorator_list + [node.args]:
            visit(child, stats, depth, prefix, node)
        return
    if isinstance(node, ast.ClassDef):
        for child in ast.iter_child_nodes(node):
            visit(child, stats, depth, prefix + node.name + '.', node)
        return
    level = depth
    if isinstance(node, BLOCKS):
        is_elif = isinstance(node, ast.If) and isinstance(parent, ast.If) and parent.orelse == [node]
        level = depth if is_elif else depth + 1
        stats['maxNesting'] = max(stats['maxNesting'], level)
    if isinstance(node, (ast.If, ast.IfExp, ast.ExceptHandler)) or type(node).__name__ == 'match_case':
        stats['branches'] += 1
    elif isinstance(node, LOOPS):
        stats['loops'] += 1
    elif isinstance(node, ast.comprehension):
        stats['loops'] += 1
        stats['branches'] += len(node.ifs)
    elif isinstance(node, ast.BoolOp):
        stats['boolOps'] += len(node.values) - 1
    for child in ast.iter_child_nodes(node):
        visit(child, stats, level, prefix, node)
module = unit('<module>', 1)
for child in tree.body:
    visit(child, module, 0, '', tree)
print(json.dumps({'functions': functions, 'module': module}))
`;

async function pythonCounts(abs: string, cwd: string, signal?: AbortSignal, sandbox?: Sandbox): Promise<{ functions: Counts[]; module: Counts }> {
  const result = await runProcess('python3', [...STDLIB_ONLY, '-c', PYTHON_COMPLEXITY, abs], {
    cwd,
    timeoutMs: 30_000,
    maxOutputChars: 1_000_000,
    signal,
    env: { PYTHONDONTWRITEBYTECODE: '1' },
    ...(sandbox ? { sandbox } : {}),
  });
  let parsed: { functions?: Counts[]; module?: Counts; error?: { line: number; message: string } };
  try {
    parsed = JSON.parse(result.stdout) as typeof parsed;
  } catch {
    throw new AutoteamError(`complexity analysis failed: ${result.error ?? (result.stderr || 'no output')}`, 'ANALYSIS_FAILED');
  }
  if (parsed.error) {
    throw new AutoteamError(`cannot analyze: syntax error at line ${parsed.error.line}: ${parsed.error.message}`, 'SYNTAX_ERROR');
  }
  return { functions: parsed.functions ?? [], module: parsed.module! };
}

/** The syntax kinds the counts look for, made once TypeScript is loaded (then kept). */
let madeKinds: ReturnType<typeof makeKinds> | null = null;
const kindsOf = (ts: TypeScript) => (madeKinds ??= makeKinds(ts));

function makeKinds(ts: TypeScript) {
  const loops = new Set([ts.SyntaxKind.ForStatement, ts.SyntaxKind.ForInStatement, ts.SyntaxKind.ForOfStatement, ts.SyntaxKind.WhileStatement, ts.SyntaxKind.DoStatement]);
  return {
    loops,
    blocks: new Set([...loops, ts.SyntaxKind.IfStatement, ts.SyntaxKind.SwitchStatement, ts.SyntaxKind.TryStatement]),
    branches: new Set([ts.SyntaxKind.IfStatement, ts.SyntaxKind.ConditionalExpression, ts.SyntaxKind.CaseClause, ts.SyntaxKind.CatchClause]),
    logical: new Set([
      ts.SyntaxKind.AmpersandAmpersandToken,
      ts.SyntaxKind.BarBarToken,
      ts.SyntaxKind.QuestionQuestionToken,
      ts.SyntaxKind.AmpersandAmpersandEqualsToken,
      ts.SyntaxKind.BarBarEqualsToken,
      ts.SyntaxKind.QuestionQuestionEqualsToken,
    ]),
  };
}

/** The name of a function worth reporting on its own; undefined for an unnamed callback. */
function functionName(ts: TypeScript, node: Node, source: SourceFile): string | undefined {
  if (ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) || ts.isGetAccessor(node) || ts.isSetAccessor(node)) {
    return node.name?.getText(source) ?? 'default';
  }
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  if (ts.isFunctionExpression(node) || ts.isArrowFunction(node)) {
    const parent = node.parent;
    if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) {
      return parent.name.getText(source);
    }
    if (ts.isBinaryExpression(parent) && parent.operatorToken.kind === ts.SyntaxKind.EqualsToken) return parent.left.getText(source);
    if (ts.isFunctionExpression(node) && node.name) return node.name.text;
  }
  return undefined;
}

async function scriptCounts(abs: string): Promise<{ functions: Counts[]; module: Counts }> {
  const ts = await loadTypeScript();
  const kinds = kindsOf(ts);
  const text = fs.readFileSync(abs, 'utf8');
  const kind = abs.endsWith('.tsx') ? ts.ScriptKind.TSX : abs.endsWith('.ts') ? ts.ScriptKind.TS : ts.ScriptKind.JS;
  const source = ts.createSourceFile(abs, text, ts.ScriptTarget.Latest, true, kind);
  const functions: Counts[] = [];
  const unit = (name: string, line: number): Counts => ({ name, line, branches: 0, loops: 0, boolOps: 0, maxNesting: 0 });
  const lineOf = (node: Node): number => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;

  const visit = (node: Node, stats: Counts, depth: number, prefix: string): void => {
    const name = ts.isFunctionLike(node) ? functionName(ts, node, source) : undefined;
    if (name !== undefined) {
      const inner = unit(prefix + name, lineOf(node));
      functions.push(inner);
      ts.forEachChild(node, (child) => visit(child, inner, 0, `${prefix}${name}.`));
      return;
    }
    if (ts.isClassLike(node)) {
      const className = node.name?.text ?? '<class>';
      ts.forEachChild(node, (child) => visit(child, stats, depth, `${prefix}${className}.`));
      return;
    }
    let level = depth;
    if (kinds.blocks.has(node.kind)) {
      const isElseIf = ts.isIfStatement(node) && ts.isIfStatement(node.parent) && node.parent.elseStatement === node;
      level = isElseIf ? depth : depth + 1;
      stats.maxNesting = Math.max(stats.maxNesting, level);
    }
    if (kinds.branches.has(node.kind)) stats.branches += 1;
    else if (kinds.loops.has(node.kind)) stats.loops += 1;
    else if (ts.isBinaryExpression(node) && kinds.logical.has(node.operatorToken.kind)) stats.boolOps += 1;
    ts.forEachChild(node, (child) => visit(child, stats, level, prefix));
  };
  const module = unit('<module>', 1);
  ts.forEachChild(source, (child) => visit(child, module, 0, ''));
  return { functions, module };
}

const withCyclomatic = (counts: Counts): UnitComplexity => ({
  ...counts,
  cyclomatic: 1 + counts.branches + counts.loops + counts.boolOps,
});

/** Per-function complexity of one workspace file, from the Python `ast` module or the TypeScript AST. */
export async function analyzeComplexity(workspace: string, file: string, options: { signal?: AbortSignal; sandbox?: Sandbox } = {}): Promise<ComplexityReport> {
  const language = languageOf(file, 'analyze');
  const abs = resolveInWorkspace(workspace, file);
  assertPlainFile(abs, file);
  if (!fs.statSync(abs).isFile()) throw new AutoteamError(`'${file}' is not a file`, 'NOT_A_FILE');
  const counts = language === 'python' ? await pythonCounts(abs, path.resolve(workspace), options.signal, options.sandbox) : await scriptCounts(abs);
  const functions = counts.functions.map(withCyclomatic).sort((a, b) => a.line - b.line);
  const module = withCyclomatic(counts.module);
  const units = [module, ...functions];
  return {
    file: workspaceRelative(workspace, abs),
    language,
    functions,
    module,
    totals: {
      functions: functions.length,
      branches: units.reduce((sum, u) => sum + u.branches, 0),
      loops: units.reduce((sum, u) => sum + u.loops, 0),
      cyclomatic: units.reduce((sum, u) => sum + u.cyclomatic, 0),
      maxCyclomatic: Math.max(...units.map((u) => u.cyclomatic)),
    },
    maxNesting: Math.max(...units.map((u) => u.maxNesting)),
  };
}

export function complexitySummary(report: ComplexityReport): string {
  const count = report.totals.functions;
  return `${report.file}: ${count} function${count === 1 ? '' : 's'}, max cyclomatic ${report.totals.maxCyclomatic}, max nesting ${report.maxNesting}`;
}

/** The summary, then one line per function (and module code that has decisions), flagging high ones. */
export function formatComplexity(report: ComplexityReport, limit = 40): string {
  const describe = (u: UnitComplexity): string => {
    const high = u.cyclomatic > HIGH_CYCLOMATIC || u.maxNesting > HIGH_NESTING ? '  (high)' : '';
    return `  ${u.name} (line ${u.line}): cyclomatic ${u.cyclomatic}, branches ${u.branches}, loops ${u.loops}, nesting ${u.maxNesting}${high}`;
  };
  const units = report.module.cyclomatic > 1 ? [report.module, ...report.functions] : report.functions;
  const lines = [complexitySummary(report), ...units.slice(0, limit).map(describe)];
  if (units.length > limit) lines.push(`  …and ${units.length - limit} more`);
  lines.push(`  thresholds: cyclomatic ≤ ${HIGH_CYCLOMATIC}, nesting ≤ ${HIGH_NESTING}`);
  return lines.join('\n');
}
