import path from 'node:path';
import { ConfigError } from '../errors.js';
import type { EventInput, HookEventName } from '../events/schema.js';
import { compileMatcher, DEFAULT_HOOK_TIMEOUT_S, type HookCommand, type HooksConfig, HooksConfigSchema } from './config.js';
import { type HookProcessResult, runHookProcess } from './hook-process.js';
import { jsonBlock } from './json-output.js';
import { type HookPayloads, hookInput, matchTarget } from './payload.js';
import { describeZodError } from '../board/schemas.js';
import { cutText } from '../sizes.js';

export type HookDecision = 'allow' | 'block' | 'warn';

/** What the runtime does next: go on (`allow`, `warn`: go on and log the reason) or not (`block`). */
export interface HookResult {
  decision: HookDecision;
  /** Why: a block's reason (for the agent), or the warnings, one per line. */
  reason?: string;
}

export interface HookRunnerOptions {
  /** The board's folder: every hook runs there. */
  cwd: string;
  /** Where each hook's decision goes as a `hook_decision` event (an EventSink's `emit`). */
  emit: (event: EventInput<'hook_decision'>) => void;
  /** The person's environment for the hooks (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** Bytes kept of each hook's stdout and of its stderr (default 64 KiB); the middle of more is cut. */
  maxOutputBytes?: number;
}

export const DEFAULT_HOOK_OUTPUT_BYTES = 64 * 1024;

/** Events that report what already happened: nothing is left to block, so a block counts as a warning. */
const INFORMATIONAL: ReadonlySet<HookEventName> = new Set(['PipelineCompleted']);

interface CompiledGroup {
  matches: (target: string) => boolean;
  hooks: readonly HookCommand[];
}

/**
 * The person's hooks (`hooks` in autoteam.config.json): their own shell commands, run at the team's
 * boundaries with their rights, in the board's folder and with their environment — not in the
 * agents' sandbox. A hook reads the event as JSON on stdin; exit 0 allows, exit 2 blocks with its
 * stderr as the reason, any other exit (or a timeout) warns and allows. Several hooks of one event
 * run in config order and the first block wins (later ones do not run). Every hook run is one
 * `hook_decision` event.
 *
 * Integration contract — where the runtime calls `run`, and what it does with a block:
 *
 * | event             | call it                                                         | on `block` (reason = `result.reason`) |
 * |-------------------|-----------------------------------------------------------------|----------------------------------------|
 * | PreToolUse        | after a tool call's arguments validate, before the tool runs    | do not run it; answer the call with a tool error (`isError`) carrying the reason, outcome kind `hook_blocked` in its `tool_call` event |
 * | PostToolUse       | after the tool ran, before its result goes to the model         | append the reason to the tool result the model reads (the tool's effect stands) |
 * | TaskCompleted     | when a stage signal / complete_task is about to complete the task and hand it on, before any board write | the task stays in progress with the agent; answer the signal's tool call with a `hook_blocked` tool error carrying the reason, so the agent reads it and continues |
 * | TaskCreated       | right after a task is posted (by the lead, a person, or a handoff); the task is held, unclaimable, until the hooks decide | cancel the task (`task_cancelled`, by `hook`, with the reason; a pipeline whose open task is cancelled ends as cancelled, as for any cancel); when a tool call of an agent posted it, that call's result is a `hook_blocked` tool error with the reason |
 * | TeammateIdle      | when a teammate is about to go idle (its turn ended without work to claim) | it does not go idle: the reason is put before it as a message from `hook` and it takes another turn |
 * | PipelineCompleted | once, when a pipeline reaches approved, failed or cancelled     | nothing to block: `run` itself returns (and records) a block as `warn` |
 *
 * On `warn` the runtime goes on and may show the reason to the person; on `allow` it goes on. A
 * block costs the agent a turn, so repeated blocks run into the limits a task already has (turns,
 * attempts); the runtime needs no other floor. A reason bound for the model goes through the same
 * redaction as a tool result (a hook's stderr may print the person's environment). `run` never
 * throws for a hook's failure (a hook that cannot start is a warning) and returns within the sum of
 * the matching hooks' timeouts.
 *
 * The payload is `HookPayloads[event]`; fill `workspace` with the task's folder where there is one
 * (hooks run in the board's folder; a hook that tests the work `cd`s to $AUTOTEAM_WORKSPACE).
 * The config is plain JSON, so a worker thread or `autoteam worker` process builds its own runner
 * from the same `ProjectConfig.hooks`.
 */
export class HookRunner {
  private readonly groups = new Map<HookEventName, CompiledGroup[]>();
  private readonly cwd: string;

  /** `config` is checked again here (a ConfigError names the key path), so any source may hand it in. */
  constructor(
    config: HooksConfig | undefined,
    private readonly options: HookRunnerOptions,
  ) {
    const parsed = HooksConfigSchema.safeParse(config ?? {});
    if (!parsed.success) {
      throw new ConfigError(describeZodError(parsed.error, undefined, { prefix: ['hooks'], max: Infinity }));
    }
    this.cwd = path.resolve(options.cwd);
    for (const [event, groups] of Object.entries(parsed.data) as Array<[HookEventName, NonNullable<(typeof parsed.data)[HookEventName]>]>) {
      this.groups.set(
        event,
        groups.map((group) => ({ matches: compileMatcher(group.matcher), hooks: group.hooks })),
      );
    }
  }

  /** Whether any hook is configured for `event` (so the runtime can skip building its payload). */
  has(event: HookEventName): boolean {
    return (this.groups.get(event) ?? []).some((group) => group.hooks.length > 0);
  }

  /** The longest `run(event)` may take: the sum of the timeouts of every hook of the event. */
  longestMs(event: HookEventName): number {
    const hooks = (this.groups.get(event) ?? []).flatMap((group) => group.hooks);
    return hooks.reduce((total, hook) => total + Math.round((hook.timeout ?? DEFAULT_HOOK_TIMEOUT_S) * 1000), 0);
  }

  async run<E extends HookEventName>(event: E, payload: HookPayloads[E], options: { signal?: AbortSignal } = {}): Promise<HookResult> {
    const target = matchTarget(event, payload);
    const hooks = (this.groups.get(event) ?? []).filter((group) => group.matches(target)).flatMap((group) => group.hooks);
    if (hooks.length === 0) return { decision: 'allow' };
    const input = hookInput(event, payload, this.cwd);
    const env = { ...(this.options.env ?? process.env), ...(payload.workspace ? { AUTOTEAM_WORKSPACE: payload.workspace } : {}) };
    const warnings: string[] = [];
    for (const hook of hooks) {
      const timeoutS = hook.timeout ?? DEFAULT_HOOK_TIMEOUT_S;
      const ran = await runHookProcess(hook.command, {
        cwd: this.cwd,
        env,
        input,
        timeoutMs: Math.round(timeoutS * 1000),
        maxOutputBytes: this.options.maxOutputBytes ?? DEFAULT_HOOK_OUTPUT_BYTES,
        ...(options.signal ? { signal: options.signal } : {}),
      });
      let verdict = decide(event, ran, timeoutS);
      if (verdict.decision === 'block' && INFORMATIONAL.has(event)) {
        verdict = { decision: 'warn', reason: `${verdict.reason} (asked to block, but the ${event} event cannot be blocked)` };
      }
      this.record(event, hook.command, verdict, ran, payload);
      if (verdict.decision === 'block') return verdict;
      if (verdict.decision === 'warn') warnings.push(verdict.reason ?? `${hook.command}: warned`);
      if (ran.canceled) break;
    }
    return warnings.length ? { decision: 'warn', reason: warnings.join('\n') } : { decision: 'allow' };
  }

  private record(event: HookEventName, command: string, verdict: HookResult, ran: HookProcessResult, payload: HookPayloads[HookEventName]): void {
    try {
      this.options.emit({
        type: 'hook_decision',
        hook: event,
        command,
        decision: verdict.decision,
        exitCode: ran.exitCode,
        // The agent reads a block's whole reason; the log keeps its start and its end.
        ...(verdict.reason !== undefined ? { reason: cutText(verdict.reason, LOGGED_REASON_CHARS, 'not kept in the log', { tail: 1_000 }) } : {}),
        durationMs: ran.durationMs,
        pipeline: payload.pipeline,
        task: payload.task,
        agent: payload.agent,
        ...(payload.role ? { role: payload.role } : {}),
      });
    } catch {
      // The record is the log's concern; the decision still stands and goes back to the runtime.
    }
  }
}

/** The characters of a decision's reason the event log keeps: a hook may say 64 KiB on every call. */
export const LOGGED_REASON_CHARS = 4_000;

/**
 * A block's reason when the hook gave none. Plain, because every caller says the block in its own
 * words first (`blocked by a TaskCreated hook: …`, `A hook blocked completing this task: …`).
 */
export const NO_REASON = 'no reason given';

/** One hook's exit, read as Claude Code reads it. */
function decide(event: HookEventName, ran: HookProcessResult, timeoutS: number): HookResult {
  const stderr = ran.stderr.trim();
  const said = stderr ? `: ${stderr}` : '';
  if (ran.error) return { decision: 'warn', reason: `could not run the hook (${ran.error})` };
  if (ran.timedOut) return { decision: 'warn', reason: `timed out after ${timeoutS} s; the hook and the processes it started were killed${said}` };
  if (ran.canceled) return { decision: 'warn', reason: `canceled; the hook and the processes it started were killed${said}` };
  if (ran.exitCode === 0) {
    const block = jsonBlock(event, ran.stdout);
    return block ? { decision: 'block', reason: block.reason ?? NO_REASON } : { decision: 'allow' };
  }
  if (ran.exitCode === 2) return { decision: 'block', reason: stderr || `${NO_REASON} (exit 2, nothing on stderr)` };
  if (ran.exitCode === null) return { decision: 'warn', reason: `killed by ${ran.exitSignal ?? 'a signal'}${said}` };
  return { decision: 'warn', reason: stderr || `exited with ${ran.exitCode}` };
}
