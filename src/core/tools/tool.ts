import { z } from 'zod';
import type { Artifacts, Fence, Mailbox, Message, RequestStore, Task, TaskBoardLike, TeamRegistry } from '../board/index.js';
import type { BlobStore } from '../board/blobs.js';
import type { Sandbox } from '../exec/sandbox.js';
import type { ToolSpec } from '../model/types.js';
import type { EventInput, ToolOutcomeKind } from '../events/schema.js';

/** What a tool call asks the loop to do next, besides answering the model. */
export type LoopSignal =
  | { kind: 'idle'; reason: string }
  /**
   * A stage signal tool (complete_requirements_analysis, submit_for_review, approve_code, …): the
   * task ends with `result` and `artifacts`, and the pipeline moves on.
   */
  | { kind: 'transition'; tool: string; input: Record<string, unknown>; artifacts: Artifacts; result: string }
  /** A safety valve tripped: the task (and its pipeline) ends as failed. */
  | { kind: 'fail'; reason: string }
  /** The agent is done for good (shutdown approved). */
  | { kind: 'exit'; reason: string }
  /** claim_task took a task: the runtime works it as a task (its stage tools, lease renewal). */
  | { kind: 'claimed'; task: Task };

export interface ToolOutcome {
  /** What the model reads. */
  content: string;
  isError?: boolean;
  /** How it ended, machine-readable (default: `ok`, or `error` with isError). */
  kind?: ToolOutcomeKind;
  /** What a person sees of it, one line (default: the first line of `content`). */
  display?: string;
  signal?: LoopSignal;
}

export interface AgentIdentity {
  name: string;
  role: string;
  team: string;
}

export interface ToolLimits {
  /** Subprocess wall-clock limit. */
  commandTimeoutMs: number;
  /** Characters of stdout/stderr kept; the rest is cut with a note. */
  maxOutputChars: number;
}

/** Everything a tool may touch. The runtime builds one per task; tools never reach around it. */
export interface ToolContext {
  agent: AgentIdentity;
  rootDir: string;
  /** Absolute path; file and process tools are confined to it. */
  workspace: string;
  /**
   * Paths inside the workspace (relative to it) that the file tools refuse: the board's own folders
   * and autoteam's trusted files when the workspace is the board's folder (the lead's, whose sandbox
   * hides them too), and the trusted files at the top of a pipeline's worktree.
   */
  offLimits?: readonly string[];
  board: TaskBoardLike;
  /** Shutdown and plan-approval requests of the board. */
  requests: RequestStore;
  /** The board's store of submitted files (absent in bare contexts: nothing is uploaded). */
  blobs?: BlobStore;
  mailbox: Mailbox;
  registry: TeamRegistry;
  /** The task being worked on, as claimed (may be stale: re-read the board when it matters). */
  task: Task | null;
  fence: Fence | null;
  signal: AbortSignal;
  limits: ToolLimits;
  /** Appends a history event to the current task (fenced) and optionally updates its artifacts. */
  record(event: string, detail?: string, artifacts?: (current: Artifacts) => Artifacts): Promise<void>;
  /** Waits for an inbox message matching `match` (other messages stay queued for the loop). */
  waitForMessage(match: (message: Message) => boolean, timeoutMs: number): Promise<Message | null>;
  log(line: string): void;
  /** Tells the board's events (criteria, checks, questions); absent in bare contexts. */
  emit?(input: EventInput): void;
  /** Reports working/waiting through the runtime (registry, trace and UI); absent in bare contexts. */
  setStatus?(status: 'working' | 'waiting', reason?: string): Promise<void>;
  /** Limits and protocol settings (defaults apply where absent). */
  settings?: Partial<RuntimeSettings>;
  /** Every process a tool starts runs in it: bubblewrap where there is one, limits, a clean environment. */
  sandbox: Sandbox;
  /**
   * Why this claim may not change the workspace any more (taken over, finished), or null. File tools
   * ask before every write; the runtime also aborts the work.
   */
  claimLost?(): string | null;
}

export interface RuntimeSettings {
  maxQuestions: number;
  answerTimeoutMs: number;
  planTimeoutMs: number;
  maxRevisions: number;
  /** Model calls over all stages of one pipeline (MAX_PIPELINE_STEPS). */
  maxPipelineSteps: number;
  /** Input + output tokens over all stages of one pipeline, by provider usage (TOKEN_BUDGET_PIPELINE). */
  pipelineTokenBudget: number;
}

export const DEFAULT_RUNTIME_SETTINGS: RuntimeSettings = {
  maxQuestions: 8,
  answerTimeoutMs: 10 * 60_000,
  planTimeoutMs: 10 * 60_000,
  maxRevisions: 3,
  maxPipelineSteps: 60,
  pipelineTokenBudget: 500_000,
};

/** Sets the agent's status through the runtime when it has one, else straight in the registry. */
export async function reportStatus(ctx: ToolContext, status: 'working' | 'waiting', reason?: string): Promise<void> {
  if (ctx.setStatus) await ctx.setStatus(status, reason);
  else await ctx.registry.setStatus(ctx.agent.name, status, { task: ctx.task?.id ?? null, ...(reason ? { reason } : {}) });
}

export function settingsOf(ctx: ToolContext): RuntimeSettings {
  return { ...DEFAULT_RUNTIME_SETTINGS, ...ctx.settings };
}

export interface ToolDefinition<S extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  inputSchema: S;
  /**
   * The JSON Schema the model is shown, when it is not `inputSchema`'s: an MCP server's tool, whose
   * schema is the server's own (and which the server checks; `inputSchema` only asks for an object).
   */
  inputJsonSchema?: Record<string, unknown>;
  run(input: z.output<S>, ctx: ToolContext): Promise<ToolOutcome>;
  /**
   * Loads what the tool's first run would load (its modules, the python it starts), so that the
   * first task does not wait for it: a teammate calls it for its role's tools once it is idle.
   */
  warm?(): Promise<unknown>;
}

export function defineTool<S extends z.ZodType>(definition: ToolDefinition<S>): ToolDefinition<S> {
  return definition;
}

/** Tool failures are data for the model: a result with is_error and a message saying what is allowed. */
export function toolError(content: string, kind: ToolOutcomeKind = 'error'): ToolOutcome {
  return { content, isError: true, kind };
}

/** Each tool's spec, made once: a tool is defined once and its schema does not change. */
const specs = new WeakMap<ToolDefinition, ToolSpec>();

/** What the model is shown of `tool`. The same frozen object every time: a provider copies what it changes. */
export function toolSpec(tool: ToolDefinition): ToolSpec {
  const known = specs.get(tool);
  if (known) return known;
  const schema = { ...(tool.inputJsonSchema ?? (z.toJSONSchema(tool.inputSchema, { target: 'draft-7', io: 'input' }) as Record<string, unknown>)) };
  delete schema.$schema;
  const spec: ToolSpec = Object.freeze({
    name: tool.name,
    description: tool.description,
    input_schema: Object.freeze({ ...schema, type: 'object' }),
  });
  specs.set(tool, spec);
  return spec;
}
