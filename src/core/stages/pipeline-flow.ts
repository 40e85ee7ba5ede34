import { type Artifacts, RETRY_RUNTIME_KEYS } from '../board/artifacts.js';
import type { Task } from '../board/schemas.js';
import { PIPELINE_KEYS } from './pipeline-data.js';
import type { StageDefinition, Transition } from './stage.js';
import type { StageRegistry } from './stage-registry.js';

/**
 * The pipeline's rules over tasks as data, with no board and no effects: which way a finished task
 * went, which task sent work back, and what a successor or a retry carries.
 */

/** Runtime keys every task of a pipeline carries forward, besides the pipeline's data. */
const CARRIED_RUNTIME = ['requirement', 'git'] as const;

/** The signal a task took: recorded, or on boards written before `signal` was, inferred by its stage. */
function signalOf(definition: StageDefinition, task: Task): string | undefined {
  return task.artifacts.signal ?? definition.inferSignal?.(task);
}

/** The transition a completed stage task took (an old board's task with nothing to go by: the stage's first). */
export function transitionOf(stages: StageRegistry, task: Task): Transition | undefined {
  if (!task.stage) return undefined;
  const definition = stages.get(task.stage);
  const signal = signalOf(definition, task);
  return signal ? definition.transitions[signal] : Object.values(definition.transitions)[0];
}

/** The task of `stage` at `revision − 1` of `pipeline` that sent the work back, if any. */
export function sentBackBy(stages: StageRegistry, tasks: readonly Task[], pipeline: number, stage: string, revision: number): Task | undefined {
  if (revision < 1 || !stages.has(stage)) return undefined;
  const definition = stages.get(stage);
  return tasks.find((t) => {
    if (t.pipeline !== pipeline || t.stage !== stage || t.revision !== revision - 1) return false;
    const signal = signalOf(definition, t);
    return signal !== undefined && definition.transitions[signal]?.revise === true;
  });
}

/** Only `keys` of `artifacts`, those that are set. */
function pick(artifacts: Artifacts, keys: readonly string[]): Artifacts {
  const kept: Artifacts = {};
  for (const key of keys) if (artifacts[key] !== undefined) Object.assign(kept, { [key]: artifacts[key] });
  return kept;
}

/** What the task that follows `done` by `transition` carries: where it came from, the pipeline's data, the signal's carry. */
function carriedArtifacts(done: Task, transition: Transition): Artifacts {
  return { from: done.id, ...pick(done.artifacts, [...CARRIED_RUNTIME, ...PIPELINE_KEYS, ...(transition.carry ?? [])]) };
}

/** What follows a completed stage task: the next stage, at which revision, what it carries, and the task that sent work back to it. */
export interface Successor {
  definition: StageDefinition;
  revision: number;
  artifacts: Artifacts;
  sentBack?: Task;
}

/** The successor `done` should have, among the board's `tasks`; null when nothing follows (the pipeline approved). */
export function successorOf(stages: StageRegistry, tasks: readonly Task[], done: Task): Successor | null {
  const transition = transitionOf(stages, done);
  if (!transition || transition.next === 'approved') return null;
  const revision = transition.revise ? done.revision + 1 : done.revision;
  const artifacts = carriedArtifacts(done, transition);
  const definition = stages.get(transition.next);
  const sentBack = sentBackBy(stages, tasks, done.pipeline!, definition.stage, revision);
  return { definition, revision, artifacts, ...(sentBack ? { sentBack } : {}) };
}

/** What a retry of `failed` keeps: the runtime's and the pipeline's keys, and what its stage says to keep. */
export function retriedArtifacts(failed: Task, definition: StageDefinition | null): Artifacts {
  return { ...pick(failed.artifacts, [...RETRY_RUNTIME_KEYS, ...PIPELINE_KEYS, ...(definition?.retry.keep ?? [])]), retryOf: failed.id };
}
