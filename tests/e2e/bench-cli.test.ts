import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const BENCH = path.resolve('dist/bench/main.js');
const bench = (args: string[]) => spawnSync(process.execPath, [BENCH, ...args], { encoding: 'utf8', timeout: 60_000 });

describe('npm run bench', () => {
  it('--help lists the options and the sections, and runs nothing', () => {
    const run = bench(['--help']);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^usage: npm run bench -- \[--json\] \[--quick\] \[--only/);
    expect(run.stdout).toContain('  claim race file claimNext\n');
    expect(run.stdout).toContain('  board scan\n');
  });

  it('a misspelt --only name or an unknown option is an error naming it, exit 2, not an empty table', () => {
    const misspelt = bench(['--only', 'claim race file claimnext']);
    expect(misspelt.status).toBe(2);
    expect(misspelt.stderr.split('\n')[0]).toBe("bench: --only names no section: 'claim race file claimnext'");
    expect(misspelt.stdout).toBe('');
    const unknown = bench(['--fast']);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr.split('\n')[0]).toBe('bench: unknown option --fast');
  });

  it('--quick --only runs that section and reports its rows against their targets', () => {
    const run = bench(['--quick', '--json', '--only', 'board scan']);
    const report = JSON.parse(run.stdout) as { ok: boolean; sections: Record<string, Array<{ metric: string; ok: boolean | null }>> };
    // A target is a speed on this machine, and a busy machine may miss one: the exit status says
    // whether every row met its target, whichever it was.
    expect(run.status, run.stderr).toBe(report.ok ? 0 : 1);
    expect(report.ok).toBe(report.sections['board scan']!.every((row) => row.ok !== false));
    expect(Object.keys(report.sections)).toEqual(['board scan']);
    expect(report.sections['board scan']!.map((row) => row.metric)).toContain('list() warm, 1 changed @1000');
  });
});
