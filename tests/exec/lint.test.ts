import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatLintReport, type LintReport, lintFile } from '../../src/core/exec/lint.js';
import { PathEscapeError } from '../../src/core/exec/sandbox-path.js';
import { PYTHON_ORGANIZER } from './fixtures.js';

let workspace: string;
beforeEach(() => {
  workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-lint-'));
});
afterEach(() => fs.rmSync(workspace, { recursive: true, force: true }));

async function lint(name: string, content: string): Promise<LintReport> {
  fs.writeFileSync(path.join(workspace, name), content);
  return lintFile(workspace, name);
}

const rules = (report: LintReport): string[] => report.problems.map((p) => `${p.line}:${p.rule}`);

describe('lintFile on Python', () => {
  it('passes a clean file', async () => {
    const report = await lint('organize.py', PYTHON_ORGANIZER);
    expect(report).toEqual({ file: 'organize.py', language: 'python', problems: [], ok: true });
    expect(formatLintReport(report)).toBe('organize.py: no problems');
  });

  it('reports a missing module docstring', async () => {
    const report = await lint('a.py', 'import os\nprint(os.sep)\n');
    expect(rules(report)).toEqual(['1:module-docstring']);
    expect(formatLintReport(report)).toBe('a.py: 1 problem\n  line 1 [module-docstring] missing module docstring');
  });

  it('reports a bare except from the AST, not from text', async () => {
    const report = await lint('a.py', '"""Doc."""\ntry:\n    pass\nexcept:\n    pass\ntry:\n    pass\nexcept ValueError:\n    pass\ns = "except:"\n');
    expect(rules(report)).toEqual(['4:bare-except']);
  });

  it('reports long lines, trailing whitespace and tabs with their lines', async () => {
    const long = `x = '${'a'.repeat(130)}'`;
    const report = await lint('a.py', `"""Doc."""\n${long}\ny = 1   \nif y:\n\tz = 2\n`);
    expect(rules(report)).toEqual(['2:line-too-long', '3:trailing-whitespace', '5:tab']);
    expect(report.problems[0]!.message).toMatch(/136 characters \(limit 120\)/);
    expect(report.ok).toBe(false);
  });

  it('reports a real syntax error with its line', async () => {
    const report = await lint('broken.py', '"""Doc."""\nx = 1\ndef f(:\n    pass\n');
    expect(rules(report)).toEqual(['3:syntax-error']);
  });
});

describe('lintFile on JavaScript and TypeScript', () => {
  it('passes clean files', async () => {
    expect((await lint('ok.mjs', '// Prints a greeting.\nconsole.log("hi");\n')).problems).toEqual([]);
    expect((await lint('ok.ts', '/* Adds numbers. */\nexport const add = (a: number, b: number): number => a + b;\n')).problems).toEqual([]);
  });

  it('reports TypeScript type errors for .ts files', async () => {
    const report = await lint('bad.ts', '// Typed.\nconst count: number = "three";\nexport { count };\n');
    expect(rules(report)).toEqual(['2:TS2322']);
    expect(report.problems[0]!.message).toMatch(/Type 'string' is not assignable to type 'number'/);
  });

  it('does not blame the code for missing Node type packages', async () => {
    const report = await lint('script.ts', "// Script.\nimport fs from 'node:fs';\nconsole.log(process.argv, fs);\n");
    expect(report.problems).toEqual([]);
  });

  it('reports syntax errors for .js files and a missing leading comment', async () => {
    const report = await lint('bad.js', 'function broken( {\n  return 1;\n}\n');
    expect(report.problems.some((p) => p.rule.startsWith('TS1'))).toBe(true);
    expect(rules(report)).toContain('1:leading-comment');
  });

  it('applies the style rules', async () => {
    const report = await lint('style.cjs', `// Style.\nconst a = 1; \nif (a) {\n\tconsole.log('${'b'.repeat(120)}');\n}\n`);
    expect(rules(report)).toEqual(['2:trailing-whitespace', '4:line-too-long', '4:tab']);
  });
});

describe('lintFile errors', () => {
  it('refuses unknown extensions, naming the supported ones', async () => {
    await expect(lint('notes.rb', 'puts 1')).rejects.toThrow(/cannot lint 'notes.rb': supported files are .py, .js/);
  });

  it('refuses paths outside the workspace', async () => {
    await expect(lintFile(workspace, '../x.py')).rejects.toBeInstanceOf(PathEscapeError);
  });
});
