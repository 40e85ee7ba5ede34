import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface BenchOptions {
  /** Smaller sizes, for a smoke run. */
  quick: boolean;
  /** Progress lines (stderr), so `--json` output stays clean. */
  log: (line: string) => void;
}

export interface BenchRow {
  metric: string;
  value: number;
  unit: string;
  /** Human-readable target, e.g. "≤ 100 ms"; empty when the row is informational. */
  target: string;
  /** null when there is no target. */
  ok: boolean | null;
}

/** One block of the benchmark. Add a section by exporting one and listing it in main.ts. */
export interface BenchSection {
  name: string;
  run(options: BenchOptions): Promise<BenchRow[]>;
}

export function atMost(metric: string, value: number, unit: string, limit: number): BenchRow {
  return { metric, value, unit, target: `≤ ${limit} ${unit}`.trim(), ok: value <= limit };
}

export function atLeast(metric: string, value: number, unit: string, floor: number): BenchRow {
  return { metric, value, unit, target: `≥ ${floor} ${unit}`.trim(), ok: value >= floor };
}

export function info(metric: string, value: number, unit: string): BenchRow {
  return { metric, value, unit, target: '', ok: null };
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

/** Milliseconds since the epoch with sub-millisecond resolution, comparable across processes. */
export function epochMs(): number {
  return performance.timeOrigin + performance.now();
}

/** Temp directories of this run, removed together at its end (see withTempRoot). */
const roots: string[] = [];

/**
 * Runs `fn` in a fresh temp directory, removed when the whole run ends rather than after the section:
 * on ext4 without a journal, files deleted in the last minutes make every new file's inode
 * allocation slower (the allocator skips them), so one section's clean-up would slow the next.
 */
export async function withTempRoot<T>(prefix: string, fn: (root: string) => Promise<T>): Promise<T> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), `autoteam-bench-${prefix}-`));
  roots.push(root);
  return fn(root);
}

/** A fresh folder for scratch files, on a memory filesystem when there is one; removed with the rest. */
export function scratchRoot(prefix: string): string {
  const base = fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();
  const root = fs.mkdtempSync(path.join(base, `autoteam-bench-${prefix}-`));
  roots.push(root);
  return root;
}

export function removeTempRoots(): void {
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
}
