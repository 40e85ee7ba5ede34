import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { analyzeComplexity, formatComplexity, type UnitComplexity } from '../../src/core/exec/complexity.js';
import { JS_KNOWN, PYTHON_KNOWN } from './fixtures.js';

let workspace: string;
beforeEach(() => {
  workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-complexity-'));
});
afterEach(() => fs.rmSync(workspace, { recursive: true, force: true }));

const pick = ({ name, line, branches, loops, maxNesting, cyclomatic }: UnitComplexity) => ({ name, line, branches, loops, maxNesting, cyclomatic });

describe('analyzeComplexity', () => {
  it('counts a known Python file', async () => {
    fs.writeFileSync(path.join(workspace, 'known.py'), PYTHON_KNOWN);
    const report = await analyzeComplexity(workspace, 'known.py');
    expect(report.functions.map(pick)).toEqual([
      { name: 'classify', line: 5, branches: 2, loops: 2, maxNesting: 2, cyclomatic: 6 },
      { name: 'Box.size', line: 17, branches: 1, loops: 1, maxNesting: 0, cyclomatic: 3 },
    ]);
    expect(pick(report.module)).toEqual({ name: '<module>', line: 1, branches: 1, loops: 0, maxNesting: 1, cyclomatic: 2 });
    expect(report.totals).toEqual({ functions: 2, branches: 4, loops: 3, cyclomatic: 11, maxCyclomatic: 6 });
    expect(report.maxNesting).toBe(2);
    expect(formatComplexity(report)).toContain('known.py: 2 functions, max cyclomatic 6, max nesting 2');
  });

  it('counts the same shape in JavaScript', async () => {
    fs.writeFileSync(path.join(workspace, 'known.js'), JS_KNOWN);
    const report = await analyzeComplexity(workspace, 'known.js');
    expect(report.functions.map(pick)).toEqual([
      { name: 'classify', line: 2, branches: 3, loops: 2, maxNesting: 2, cyclomatic: 7 },
      { name: 'Box.size', line: 17, branches: 0, loops: 0, maxNesting: 0, cyclomatic: 2 },
      { name: 'main', line: 22, branches: 1, loops: 0, maxNesting: 1, cyclomatic: 2 },
    ]);
    expect(report.module.cyclomatic).toBe(1);
    expect(report.totals).toEqual({ functions: 3, branches: 4, loops: 2, cyclomatic: 12, maxCyclomatic: 7 });
    expect(report.maxNesting).toBe(2);
  });

  it('reads TypeScript too', async () => {
    fs.writeFileSync(path.join(workspace, 'k.ts'), 'export function f(x: number): string {\n  return x > 0 ? "p" : "n";\n}\n');
    const report = await analyzeComplexity(workspace, 'k.ts');
    expect(report.functions.map(pick)).toEqual([{ name: 'f', line: 1, branches: 1, loops: 0, maxNesting: 0, cyclomatic: 2 }]);
  });

  it('flags deep nesting', async () => {
    const deep = '"""Deep."""\ndef deep(x):\n    for a in x:\n        for b in a:\n            if b:\n                while b:\n                    with open(b) as h:\n                        b = h.read()\n';
    fs.writeFileSync(path.join(workspace, 'deep.py'), deep);
    const report = await analyzeComplexity(workspace, 'deep.py');
    expect(report.maxNesting).toBe(5);
    expect(formatComplexity(report)).toMatch(/deep \(line 2\).*nesting 5 {2}\(high\)/);
  });

  it('refuses a Python file with a syntax error', async () => {
    fs.writeFileSync(path.join(workspace, 'bad.py'), 'def f(:\n');
    await expect(analyzeComplexity(workspace, 'bad.py')).rejects.toThrow(/syntax error at line 1/);
  });
});
