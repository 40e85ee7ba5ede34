import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { analyzeComplexityTool } from '../../src/core/tools/analyze-complexity.js';
import { runLinterTool } from '../../src/core/tools/run-linter.js';
import { runTestsTool } from '../../src/core/tools/run-tests.js';
import { toolSpec } from '../../src/core/tools/tool.js';
import { PYTHON_KNOWN, PYTHON_ORGANIZER } from '../exec/fixtures.js';
import { call, makeToolContext, type TestContext } from './context.js';

let t: TestContext;
beforeEach(() => {
  t = makeToolContext();
});
afterEach(() => t.cleanup());

const write = (name: string, content: string): void => fs.writeFileSync(path.join(t.workspace, name), content);

describe('run_linter', () => {
  it('reports problems concisely and saves the report', async () => {
    write('organize.py', 'import os\nprint(os.sep)\n');
    const outcome = await call(runLinterTool, { file: 'organize.py' }, t.ctx);
    expect(outcome).toEqual({ content: 'organize.py: 1 problem\n  line 1 [module-docstring] missing module docstring' });
    expect(t.records).toEqual([{ event: 'linted', detail: 'organize.py: 1 problem' }]);
    expect(t.artifacts()).toMatchObject({
      requirements: { goal: 'kept untouched' },
      lint: { file: 'organize.py', language: 'python', ok: false, problems: [{ line: 1, rule: 'module-docstring' }] },
    });
  });

  it('answers an unsupported or missing file with what is allowed', async () => {
    write('notes.md', '# notes');
    const unsupported = await call(runLinterTool, { file: 'notes.md' }, t.ctx);
    expect(unsupported).toMatchObject({ isError: true, content: expect.stringMatching(/supported files are \.py/) });
    const missing = await call(runLinterTool, { file: 'gone.py' }, t.ctx);
    expect(missing).toMatchObject({ isError: true, content: expect.stringMatching(/no such file 'gone.py'.*notes\.md/) });
    expect(t.records).toEqual([]);
  });
});

describe('run_tests', () => {
  it('records PASS from a real smoke run', async () => {
    write('organize.py', PYTHON_ORGANIZER);
    const outcome = await call(runTestsTool, { file: 'organize.py' }, t.ctx);
    expect(outcome.content).toMatch(/^organize\.py: PASS \(smoke run, exit 0\)\n\$ python3 organize\.py /);
    expect(outcome.content).toContain('moved c.pdf -> pdf/');
    expect(t.records).toEqual([{ event: 'tested', detail: 'organize.py: PASS (smoke run, exit 0)' }]);
    expect(t.artifacts().tests).toMatchObject({ ok: true, mode: 'smoke', exitCode: 0 });
  });

  it('records FAIL from engineer-written tests', async () => {
    write('calc.py', '"""Calc."""\n\ndef double(x):\n    """Double."""\n    return x * 3\n');
    write('test_calc.py', 'import unittest\nfrom calc import double\n\nclass T(unittest.TestCase):\n    def test_double(self):\n        self.assertEqual(double(2), 4)\n');
    const outcome = await call(runTestsTool, { file: 'calc.py' }, t.ctx);
    expect(outcome.content).toMatch(/^calc\.py: FAIL \(unittest tests, exit 1\)/);
    expect(outcome.content).toContain('AssertionError: 6 != 4');
    expect(t.records).toEqual([{ event: 'tested', detail: 'calc.py: FAIL (unittest tests, exit 1)' }]);
    expect(t.artifacts().tests).toMatchObject({ ok: false, mode: 'unittest' });
  });
});

describe('analyze_complexity', () => {
  it('reports per-function numbers and saves them', async () => {
    write('known.py', PYTHON_KNOWN);
    const outcome = await call(analyzeComplexityTool, { file: 'known.py' }, t.ctx);
    expect(outcome.content.split('\n').slice(0, 4)).toEqual([
      'known.py: 2 functions, max cyclomatic 6, max nesting 2',
      '  <module> (line 1): cyclomatic 2, branches 1, loops 0, nesting 1',
      '  classify (line 5): cyclomatic 6, branches 2, loops 2, nesting 2',
      '  Box.size (line 17): cyclomatic 3, branches 1, loops 1, nesting 0',
    ]);
    expect(t.records).toEqual([{ event: 'analyzed', detail: 'known.py: 2 functions, max cyclomatic 6, max nesting 2' }]);
    expect(t.artifacts().complexity).toMatchObject({ totals: { functions: 2, maxCyclomatic: 6 } });
  });

  it('refuses a path outside the workspace as a tool error', async () => {
    const outcome = await call(analyzeComplexityTool, { file: '../known.py' }, t.ctx);
    expect(outcome).toMatchObject({ isError: true, content: expect.stringMatching(/must stay inside the workspace/) });
  });
});

describe('tool specs', () => {
  it('produce object JSON schemas: one file or several, neither required (the changed files are the default)', () => {
    const schema = toolSpec(runTestsTool).input_schema as { type: string; properties: Record<string, { type?: string }>; required?: string[] };
    expect(schema.type).toBe('object');
    expect(schema.properties.file?.type).toBe('string');
    expect(schema.properties.files?.type).toBe('array');
    expect(schema.required ?? []).toEqual([]);
  });
});
