import type { z } from 'zod';
import type { Artifacts } from '../board/artifacts.js';
import { AutoteamError } from '../errors.js';
import type { Stage, Task } from '../board/schemas.js';
import type { ToolDefinition } from '../tools/tool.js';
import type { HandoffData } from './handoff-data.js';
import type { PipelineEffects } from './effects.js';

/** Where a signal tool sends the pipeline next. */
export type StageNext = Stage | 'approved';

export interface Transition {
  next: StageNext;
  /** Sends the work back: the next task is the same stage again at revision + 1 (bounded by max_revisions). */
  revise?: boolean;
  /** Artifacts of the finished task the next task carries, besides the requirement, requirements, Q&A and criteria. */
  carry?: readonly string[];
}

/** What a stage may look at when a task of it is posted: the task it follows, and the world through effects. */
export interface PrepareContext {
  /** The completed task the new one follows. */
  done: Task;
  /** What the new task carries so far (runtime keys, pipeline data, the signal's carry). */
  artifacts: Artifacts;
  revision: number;
  /** The task's workspace (the pipeline's worktree, or its folder under the board). */
  workspace: string;
  /** At revision ≥ 1: the task of this stage that sent the work back at revision − 1, if any. */
  sentBack?: Task;
  effects: PipelineEffects;
}

/** What `prepare` adds: artifacts for the new task, and text its handoff shows but does not store (a file's content). */
export interface Prepared {
  artifacts?: Artifacts;
  content?: string;
}

/** Why sending work back must end the pipeline instead (null: send it back). */
export interface SendBackContext {
  /** The artifacts the signal records now. */
  artifacts: Artifacts;
  /** The task that sends back (its revision is the one that failed). */
  task: Task;
  /** The task of this stage that sent work back at revision − 1, if any. */
  previous?: Task;
  maxRevisions: number;
}

/**
 * A stage, as one value: who works it and how (role, prompt, tools), what it records (its artifact
 * schema), where its signals lead and with what, what a retry keeps, and how its task is named and
 * handed over. The pipeline engine reads these and names no stage itself.
 */
export interface StageDefinition {
  stage: Stage;
  role: string;
  title: string;
  systemPrompt: string;
  /** Stage tools offered to the agent, by name (coordination tools are added by the registry). */
  tools: readonly string[];
  /** Tools only this stage has (its own signal tool, say), offered when `tools` names them. */
  ownTools?: readonly ToolDefinition[];
  /** Signal tool → the next stage. A signal ends the task; the runtime posts the next one. */
  transitions: Readonly<Record<string, Transition>>;
  /** The artifacts this stage's own tools record on its task (documentation and checks; the board stores them as JSON keys). */
  artifacts?: z.ZodObject;
  /** The subject of a task of this stage, from the requirement and what the task carries. */
  subject(requirement: string, revision: number, artifacts: Artifacts): string;
  /**
   * The handoff text a task of this stage starts with: `data` is what every stage hands on, `content`
   * what `prepare` read (the submitted file), `artifacts` the task's own (for keys only this stage reads).
   */
  handoff(data: HandoffData, content?: string, artifacts?: Artifacts): string;
  /** What a task of this stage needs from outside the board when it is posted (a file, a diff). */
  prepare?(ctx: PrepareContext): Promise<Prepared>;
  /**
   * What a pipeline that starts at this stage begins with (default: `requirementAsCriterion`). A stage
   * that has one is offered where a person picks the start (`run --start-stage`, `StageRegistry.starts`).
   */
  start?(requirement: string): Artifacts;
  /** Keys of its own artifacts a retried task of this stage keeps (the runtime's and the pipeline's are always kept). */
  retry: { keep: readonly string[] };
  /** For a signal that sends work back: why it must end the pipeline instead (default: max_revisions). */
  sendBack?(ctx: SendBackContext): string | null;
  /** Boards written before `signal` was recorded: the signal a completed task of this stage took. */
  inferSignal?(task: Task): string | undefined;
  /** Rules the runtime enforces in this stage, as `autoteam stages` prints them. */
  rules?: readonly string[];
}

/** A subject is one line: a pasted requirement's line breaks become spaces. */
export function short(text: string, max = 60): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

export const COORDINATION_TOOL_NAMES = ['send_message', 'read_inbox', 'idle', 'shutdown_response'] as const;

export const GENERAL_SYSTEM_PROMPT = [
  'You are a member of a small autonomous team that shares a task board.',
  'Work on the task you have claimed with your tools (files and commands run in your workspace), then call',
  'complete_task(result) with a one-line result, or fail_task(reason) if it cannot be done.',
  'Use send_message to talk to teammates or the lead.',
  'If the task asks for a plan first, submit it with plan_approval and wait for approval before doing the work.',
].join('\n');

/** The default send-back rule: at most max_revisions rounds. */
export function maxRevisionsGap(ctx: SendBackContext): string | null {
  return ctx.task.revision + 1 > ctx.maxRevisions ? `max_revisions (${ctx.maxRevisions}) reached` : null;
}

/** A pipeline that starts after the analysis rests its approval on the requirement itself, as its one criterion. */
export const requirementAsCriterion = (text: string): Artifacts => ({
  criteria: [{ id: 'AC1', criterion: `The program does what was asked: ${text}`, verify: 'run it on sample input and compare with the request' }],
});

/** A signal's artifacts must be what its stage's schema says (a tool that records otherwise is a bug). */
export function checkArtifacts(definition: StageDefinition, tool: string, artifacts: Artifacts): void {
  const parsed = definition.artifacts?.loose().safeParse(artifacts);
  if (parsed && !parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new AutoteamError(`${tool} recorded artifacts the ${definition.stage} stage does not take: ${issue.path.join('.') || '(root)'}: ${issue.message}`, 'BAD_ARTIFACTS');
  }
}
