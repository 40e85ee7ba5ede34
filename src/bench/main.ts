/**
 * `node dist/bench/main.js [--json] [--quick] [--only name,name]` — measures the runtime on this
 * machine. Each section is `{name, run(options) → rows}`; to add one, export it from its own file
 * and append it to `sections` below.
 */
import { fileURLToPath } from 'node:url';
import { boardSections } from './board-bench.js';
import { stopBenchPostgres } from './postgres-server.js';
import { sandboxOverhead } from './sandbox-bench.js';
import { teammateSections } from './teammate-bench.js';
import { eventLog } from './event-bench.js';
import { webBoard } from './web-bench.js';
import { scaleBench } from './scale-bench.js';
import { commandStart } from './command-bench.js';
import { type BenchOptions, type BenchRow, type BenchSection, removeTempRoots } from './section.js';

export type { BenchOptions, BenchRow, BenchSection } from './section.js';

export const sections: BenchSection[] = [...boardSections, eventLog, ...teammateSections, sandboxOverhead, webBoard, commandStart, scaleBench];

export interface SectionResult {
  section: string;
  rows: BenchRow[];
  error?: string;
}

export async function runBench(options: BenchOptions, only?: string[]): Promise<SectionResult[]> {
  const results: SectionResult[] = [];
  for (const section of sections) {
    if (only && !only.includes(section.name)) continue;
    try {
      results.push({ section: section.name, rows: await section.run(options) });
    } catch (error) {
      results.push({ section: section.name, rows: [], error: (error as Error).stack ?? String(error) });
    }
  }
  await stopBenchPostgres();
  removeTempRoots();
  return results;
}

export function formatTable(results: SectionResult[]): string {
  const header = ['section', 'metric', 'value', 'target', 'ok'];
  const lines: string[][] = [header];
  for (const result of results) {
    if (result.error) lines.push([result.section, 'ERROR', result.error.split('\n')[0]!, '', 'FAIL']);
    for (const row of result.rows) {
      const ok = row.ok === null ? '-' : row.ok ? 'ok' : 'FAIL';
      lines.push([result.section, row.metric, `${row.value}${row.unit ? ` ${row.unit}` : ''}`, row.target || '-', ok]);
    }
  }
  const widths = header.map((_, column) => Math.max(...lines.map((line) => line[column]!.length)));
  const render = (line: string[]) => line.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd();
  return [render(lines[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...lines.slice(1).map(render)].join('\n');
}

export function allOk(results: SectionResult[]): boolean {
  return results.every((result) => !result.error && result.rows.every((row) => row.ok !== false));
}

const USAGE = `usage: npm run bench -- [--json] [--quick] [--only <section>,<section>…]

  --json    the results as JSON on stdout (progress stays on stderr)
  --quick   smaller sizes, for a smoke run
  --only    run only these sections, by name (quote names with spaces)

sections:
${sections.map((section) => `  ${section.name}`).join('\n')}
`;

async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(USAGE);
    return 0;
  }
  const known = new Set(['--json', '--quick', '--only']);
  const unknown = argv.filter((arg, i) => !known.has(arg) && argv[i - 1] !== '--only');
  if (unknown.length) {
    process.stderr.write(`bench: unknown option ${unknown[0]}\n\n${USAGE}`);
    return 2;
  }
  const json = argv.includes('--json');
  const quick = argv.includes('--quick');
  const onlyIndex = argv.indexOf('--only');
  const only = onlyIndex >= 0 ? (argv[onlyIndex + 1] ?? '').split(',').map((name) => name.trim()).filter(Boolean) : undefined;
  const missing = (only ?? []).filter((name) => !sections.some((section) => section.name === name));
  if (only && (only.length === 0 || missing.length)) {
    process.stderr.write(`bench: --only ${missing.length ? `names no section: ${missing.map((name) => `'${name}'`).join(', ')}` : 'needs section names'}\n\n${USAGE}`);
    return 2;
  }
  const options: BenchOptions = { quick, log: (line) => process.stderr.write(`${line}\n`) };
  const started = Date.now();
  const results = await runBench(options, only);
  const ok = allOk(results);
  if (json) {
    const report = {
      node: process.version,
      platform: `${process.platform}-${process.arch}`,
      quick,
      ms: Date.now() - started,
      ok,
      sections: Object.fromEntries(results.map((r) => [r.section, r.error ? { error: r.error } : r.rows])),
    };
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } else {
    process.stdout.write(`${formatTable(results)}\n\n${ok ? 'all targets met' : 'some targets missed'} (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
  }
  return ok ? 0 : 1;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.exitCode = await main(process.argv.slice(2));
}
