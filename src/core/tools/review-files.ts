import { z } from 'zod';
import { SUPPORTED_EXTENSIONS } from '../exec/language.js';
import { describeFileError } from '../exec/sandbox-path.js';
import { workspaceFileSha } from './files-artifact.js';
import { type ToolContext, type ToolOutcome, toolError } from './tool.js';

/**
 * The files a review tool looks at: the ones named, else (on a repository) the files the branch
 * changed that still exist and that the tool reads, else the submitted file. The submitted file is
 * the report's `file`, so the approval gate finds it; every file's sha256 goes in `shas`.
 */

const MAX_FILES = 20;

export const reviewFilesInput = z.object({
  file: z.string().min(1).optional().describe("One file, relative to the workspace, e.g. 'organize.py'"),
  files: z.array(z.string().min(1)).max(MAX_FILES).optional().describe('Several files; with neither, the changed files (or the submitted one)'),
});

export type ReviewFilesInput = z.output<typeof reviewFilesInput>;

const supported = (file: string) => SUPPORTED_EXTENSIONS.some((ext) => file.toLowerCase().endsWith(ext));

export function reviewFiles(input: ReviewFilesInput, ctx: ToolContext, anyType = false): string[] {
  const named = [...(input.file ? [input.file] : []), ...(input.files ?? [])];
  if (named.length) return [...new Set(named)];
  const artifacts = ctx.task?.artifacts;
  const submitted = artifacts?.submitted?.file;
  const changed = (artifacts?.change?.files ?? []).filter((f) => f.status !== 'D' && (anyType || supported(f.path))).map((f) => f.path);
  const ordered = [...new Set([...(submitted ? [submitted] : []), ...changed])];
  return ordered.slice(0, MAX_FILES);
}

/** Which of `files` the report is filed under: the submitted file when it is among them. */
export function primaryFile(files: readonly string[], ctx: ToolContext): string {
  const submitted = ctx.task?.artifacts.submitted?.file;
  return submitted && files.includes(submitted) ? submitted : files[0]!;
}

export function shasOf(files: readonly string[], ctx: ToolContext): Record<string, string> {
  return Object.fromEntries(files.map((file) => [file, workspaceFileSha(ctx.workspace, file) ?? '']));
}

export const NO_FILES = 'name a file (file: "organize.py") or files: nothing was submitted and the branch changed no file this tool reads';

/**
 * Runs `check` on each file in turn. A file it cannot read (missing, escaping, unsupported) ends the
 * tool with a tool error naming the file.
 */
export async function checkEach<R extends { file: string }>(files: readonly string[], ctx: ToolContext, check: (file: string) => Promise<R>): Promise<R[] | ToolOutcome> {
  const reports: R[] = [];
  for (const file of files) {
    try {
      reports.push(await check(file));
    } catch (error) {
      return toolError(describeFileError(error, ctx.workspace, file));
    }
  }
  return reports;
}

/**
 * A report over several files as the board keeps it: the primary file's report (the submitted file
 * when it is among them), the sha256 of every file `covered`, and the other reports as `others`.
 */
export function storedReport<R extends { file: string }>(reports: readonly R[], ctx: ToolContext, covered: readonly string[] = reports.map((r) => r.file)) {
  const primary = primaryFile(reports.map((report) => report.file), ctx);
  const main = reports.find((report) => report.file === primary)!;
  const shas = shasOf(covered, ctx);
  const others = reports.filter((report) => report !== main);
  return { main, others, stored: { ...main, sha256: shas[primary] ?? '', shas, ...(others.length ? { others } : {}) } };
}
