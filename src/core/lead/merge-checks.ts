import fs from 'node:fs';
import path from 'node:path';
import type { Artifacts } from '../board/artifacts.js';
import type { Task } from '../board/schemas.js';
import { capOutput } from '../exec/process.js';
import { containment, hiddenStartDir, Sandbox, type SandboxPolicy } from '../exec/sandbox.js';
import { scratchDir } from '../exec/scratch.js';
import { git } from '../git/git.js';
import { addWorktree } from '../git/worktree.js';
import { approvalOf, tasksByPipeline } from '../stages/pipeline-status.js';

/**
 * The reviewer's evidence run again on a rebased tree: every check it recorded that passed (run_check,
 * CHK1…) and its test run (the same runner: the project's test command, the engineer's tests, or the
 * smoke run), in the sandbox a reviewer gets. A check that failed in the review proves nothing either
 * way and is not run.
 */

export interface RecheckLimits {
  commandTimeoutMs: number;
  maxOutputChars: number;
  sandbox: SandboxPolicy;
}

/** What ran and passed (`ran`), and the first failure. */
export type RecheckOutcome = { ok: true; ran: string[] } | { ok: false; ran: string[]; failed: string; output: string; guard?: Guard };

/** A pipeline merged into the base since another began, whose reviewer's checks also run on that other's tree. */
export interface Guard {
  pipeline: number;
  /** Its approving review's artifacts: the checks and tests to run. */
  review: Artifacts;
  /** The files both changed. */
  files: string[];
}

/** Left out of a check's scratch copy, as run_check leaves them out. */
const SKIPPED = new Set(['.git', '.run', '.home', '.tmp', 'node_modules', '__pycache__']);
/** What a send-back quotes of a failure's output. */
const OUTPUT_CHARS = 2_000;

/** A reviewer's sandbox on `worktree`: the board, the start folder and the person's repository out of sight. */
function reviewSandbox(worktree: string, hidden: readonly string[], policy: SandboxPolicy): Sandbox {
  return new Sandbox(
    { workspace: worktree, hidden: [...hidden, ...hiddenStartDir()], network: policy.network.includes('*') || policy.network.includes('review'), limits: policy.limits, passEnv: policy.passEnv },
    policy.mode === 'off' ? { kind: 'none', reason: 'turned off (--sandbox off)' } : containment(),
  );
}

/**
 * The pipelines merged into the base since pipeline `self` began — their merge in the base's `tip`, not
 * in `began`, the base its first task started from — that changed any of `files` (its own change): the
 * changes it was rebased over, or settled a conflict with. A revision that settles a conflict by
 * dropping the other side's lines passes its own checks; theirs, run on its tree, do not.
 */
export async function mergedSince(repo: string, tasks: readonly Task[], self: number, began: string, tip: string, files: readonly string[]): Promise<Guard[]> {
  // The commits under the tip and not under `began`, read once: the board's merged pipelines are looked up in it.
  const since = new Set((await git(repo, ['rev-list', `${began}..${tip}`], { allowFailure: true })).stdout.split('\n').filter(Boolean));
  const guards: Guard[] = [];
  for (const [pipeline, group] of tasksByPipeline(tasks)) {
    const outcome = group.find((task) => task.artifacts.outcome)?.artifacts.outcome;
    const review = approvalOf(group)?.artifacts;
    const change = review?.git;
    if (pipeline === self || outcome?.action !== 'merged' || outcome.noChange || !outcome.commit || !change?.commit || !since.has(outcome.commit)) continue;
    // Its change as reviewed (a commit git may no longer hold, on a remote's clone: then it guards nothing).
    const changed = await git(repo, ['diff', '--name-only', '--no-renames', change.base, change.commit], { allowFailure: true });
    const both = changed.exitCode === 0 ? changed.stdout.split('\n').filter((file) => files.includes(file)) : [];
    if (both.length) guards.push({ pipeline, review: review!, files: both });
  }
  return guards;
}

/**
 * Re-runs `review`'s recorded checks and tests in `worktree`, then each guard's (a failure names its
 * pipeline); the first failure ends it. A guard that fails is run again on the base's tip alone
 * (`onTip`): failing there too, the base broke it (a later pipeline, or the person, changed what it
 * checked), not this change, which is not sent back for it.
 */
export async function recheckWith(worktree: string, review: Artifacts | null, guards: readonly Guard[], hidden: readonly string[], limits: RecheckLimits, onTip: (guard: Guard) => Promise<boolean>, signal?: AbortSignal): Promise<RecheckOutcome> {
  const ran: string[] = [];
  for (const [guard, artifacts] of [...(review ? [[undefined, review] as const] : []), ...guards.map((guard) => [guard, guard.review] as const)]) {
    const checked = await recheck(worktree, artifacts, hidden, limits, signal);
    const named = (what: string) => (guard ? `pipeline #${guard.pipeline}'s ${what}` : what);
    ran.push(...checked.ran.map(named));
    if (signal?.aborted) break;
    if (!checked.ok && guard && !(await onTip(guard))) {
      ran.push(`pipeline #${guard.pipeline}'s ${checked.failed} (which fails on the base's tip too)`);
      continue;
    }
    if (!checked.ok) return { ...checked, ran, failed: named(checked.failed), ...(guard ? { guard } : {}) };
  }
  return { ok: true, ran };
}

/** Whether `guard`'s checks pass on commit `tip` of `repo`, in a worktree of its own made for them. */
export async function passesAt(repo: string, tip: string, guard: Guard, hidden: readonly string[], limits: RecheckLimits, signal?: AbortSignal): Promise<boolean> {
  const dir = path.join(scratchDir('check'), 'tree');
  await addWorktree(repo, ['--detach', dir, tip]);
  try {
    return (await recheck(dir, guard.review, hidden, limits, signal)).ok;
  } finally {
    await git(repo, ['worktree', 'remove', '--force', dir], { allowFailure: true });
    fs.rmSync(path.dirname(dir), { recursive: true, force: true });
  }
}

/** Re-runs `review`'s recorded checks and tests in `worktree`; the first failure ends it. */
export async function recheck(worktree: string, review: Artifacts, hidden: readonly string[], limits: RecheckLimits, signal?: AbortSignal): Promise<RecheckOutcome> {
  const sandbox = reviewSandbox(worktree, hidden, limits.sandbox);
  const ran: string[] = [];
  const { executeCode } = await import('../exec/execute.js');
  for (const check of (review.checks ?? []).filter((c) => c.ok)) {
    const scratch = scratchDir('check');
    try {
      fs.cpSync(worktree, scratch, { recursive: true, filter: (src) => !SKIPPED.has(path.basename(src)) && !fs.lstatSync(src).isSymbolicLink() });
      const result = await executeCode(scratch, check.code, {
        language: check.language === 'python' ? 'python' : 'javascript',
        timeoutMs: limits.commandTimeoutMs,
        maxOutputChars: limits.maxOutputChars,
        ...(signal ? { signal } : {}),
        sandbox: sandbox.forWorkspace(scratch),
      });
      if (result.exitCode !== 0 || result.timedOut || result.error || result.canceled) {
        const output = [result.stdout, result.stderr].filter(Boolean).join('\n') || result.error || `exit ${result.exitCode ?? 'none'}`;
        return { ok: false, ran, failed: `check ${check.id}`, output: capOutput(output, OUTPUT_CHARS) };
      }
      ran.push(check.id);
    } finally {
      fs.rmSync(scratch, { recursive: true, force: true });
    }
  }
  const tests = review.tests as (Artifacts['tests'] & { mode?: string; others?: Array<{ file: string }> }) | undefined;
  if (tests?.file) {
    const { runTests, testSummary } = await import('../exec/test-runner.js');
    const project = tests.mode === 'project';
    const files = project ? [tests.file] : [tests.file, ...(tests.others ?? []).map((other) => other.file)];
    for (const file of files) {
      let result;
      try {
        result = await runTests(worktree, file, { timeoutMs: limits.commandTimeoutMs, maxOutputChars: limits.maxOutputChars, sandbox, project, ...(signal ? { signal } : {}) });
      } catch (error) {
        return { ok: false, ran, failed: `the tests of ${file}`, output: `${file} cannot be tested on the rebased tree: ${(error as Error).message}` };
      }
      if (!result.ok) return { ok: false, ran, failed: testSummary(result), output: capOutput(result.output, OUTPUT_CHARS) };
      ran.push(`tests of ${file}`);
    }
  }
  return { ok: true, ran };
}
