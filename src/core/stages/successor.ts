import type { Task } from '../board/schemas.js';
import type { TaskBoardLike } from '../board/task-rules.js';
import type { FollowUp, PostResult } from '../board/task-types.js';
import type { PipelineEffects } from './effects.js';
import { handoffData } from './handoff-data.js';
import { successorOf } from './pipeline-flow.js';
import type { PipelineNotices } from './pipeline-notices.js';
import type { StageRegistry } from './stage-registry.js';
import { taskWorkspace } from './workspace.js';

/** What posting a successor needs of its pipeline. */
export interface SuccessorDeps {
  board: TaskBoardLike;
  stages: StageRegistry;
  effects: PipelineEffects;
  notices: PipelineNotices;
}

/**
 * Posts the task that follows a completed stage task (`followUpOf`); null when nothing follows.
 * Idempotent, so `Pipeline.repair` can call it for a completion whose successor was never posted
 * (the process died, or the create failed, between the two writes). Posted `by` the task's owner,
 * or whoever sent an approved task back (the merge queue).
 */
export async function postSuccessor(deps: SuccessorDeps, done: Task, by = done.owner ?? 'runtime'): Promise<Task | null> {
  const up = await followUpOf(deps, done, by);
  // Posted once, whoever gets there first: the check and the post are one step under the pipeline's lock.
  return up ? toldPosted(deps, done, await deps.board.createAfter(up.input, up.after), by) : null;
}

/**
 * The task that follows a completed stage task, built from what that task recorded on the board
 * (pipeline-flow.ts) and what the next stage prepares (it reads, and may be asked twice); null when
 * nothing follows.
 */
export async function followUpOf(deps: SuccessorDeps, done: Task, by = done.owner ?? 'runtime'): Promise<FollowUp | null> {
  const { board, effects, notices } = deps;
  const successor = successorOf(deps.stages, board.list(), done);
  if (!successor) return null;
  const { definition, revision, artifacts, sentBack } = successor;
  const stage = definition.stage;
  const workspace = taskWorkspace(board.rootDir, done);
  const prepared = definition.prepare ? await definition.prepare({ done, artifacts, revision, workspace, effects, ...(sentBack ? { sentBack } : {}) }) : {};
  Object.assign(artifacts, prepared.artifacts);
  const requirement = done.artifacts.requirement ?? done.description;
  const handoff = definition.handoff(handoffData({ stage, revision, description: requirement, artifacts }), prepared.content, artifacts);
  const subject = definition.subject(requirement, revision, artifacts);
  return {
    input: {
      subject,
      // The requirement itself is in the artifacts and the handoff: the description is a pointer.
      description: requirement.length > 300 ? `${requirement.slice(0, 299)}…` : requirement,
      role: definition.role,
      stage,
      pipeline: done.pipeline,
      revision,
      handoff,
      artifacts,
      by,
      // Built from a finished task: trimmed to fit like any runtime write, never refused.
      trimToFit: true,
      ...notices.held(),
    },
    after: { pipeline: done.pipeline!, task: done.id },
  };
}

/** A successor of `done` posted: told as the pipeline's transition and to TaskCreated hooks when this call posted it. */
export async function toldPosted(deps: SuccessorDeps, done: Task, posted: PostResult, by = done.owner ?? 'runtime'): Promise<Task> {
  if (!posted.created) return posted.task;
  deps.notices.transition(done, posted.task.id, posted.task.stage!, by);
  return deps.notices.created(posted.task);
}
