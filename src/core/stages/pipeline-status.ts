import type { Task, TaskUsage } from '../board/schemas.js';
import type { TaskBoardLike } from '../board/task-rules.js';
import { addTaskUsage, NO_USAGE } from '../board/unwritten-usage.js';
import { AutoteamError } from '../errors.js';

/**
 * A pipeline's state derived from its tasks, with no board access: the status, what it spent, and
 * whether its budget allows another model call. Shared by the runtime, the front ends and the CLI.
 */

export type PipelineStatus = 'active' | 'approved' | 'failed' | 'cancelled';

/** A failed or cancelled task that was not retried (a retried one is history, not the pipeline's state). */
export const isFailed = (task: Task) => (task.status === 'failed' || task.status === 'cancelled') && task.artifacts.retriedBy === undefined;

/** Not ended: waiting for a claimer, or claimed. */
export const isOpen = (task: Task) => task.status === 'pending' || task.status === 'in_progress';

/**
 * One pipeline's status from its tasks: failed if any failed; approved once the task whose signal
 * ends the pipeline completed (`final`; on boards written before it was recorded, an approving
 * verdict).
 */
export function pipelineStatus(tasks: readonly Task[]): PipelineStatus {
  const ended = tasks.filter(isFailed);
  if (ended.some((task) => task.status === 'failed')) return 'failed';
  if (ended.length > 0) return 'cancelled';
  return approvalOf(tasks) ? 'approved' : 'active';
}

/** The completed task whose signal approved the pipeline, if one did. */
export function approvalOf(tasks: readonly Task[]): Task | undefined {
  const final = tasks.find((task) => task.status === 'completed' && task.artifacts.final === true);
  if (final) return final;
  // Boards written before `final` (and `signal`) were recorded: an approving verdict (a review's, the only
  // stage that gave one then) ended the pipeline. One that recorded its signal and is not final handed on
  // to another stage (maybe not posted yet).
  return tasks.find((task) => task.status === 'completed' && task.artifacts.verdict === 'approved' && task.artifacts.signal === undefined);
}

/** Every pipeline's status from one board listing, without re-reading the board. */
export function pipelineStatuses(tasks: readonly Task[]): Map<number, PipelineStatus> {
  return new Map([...tasksByPipeline(tasks)].map(([id, group]) => [id, pipelineStatus(group)]));
}

/** Each pipeline's tasks, in the order given, grouped in one pass. */
export function tasksByPipeline(tasks: readonly Task[]): Map<number, Task[]> {
  const groups = new Map<number, Task[]>();
  for (const task of tasks) {
    if (task.pipeline === null) continue;
    const group = groups.get(task.pipeline);
    if (group) group.push(task);
    else groups.set(task.pipeline, [task]);
  }
  return groups;
}

/** Model calls and tokens summed over tasks (one pipeline's, usually). */
export function pipelineUsage(tasks: readonly Task[]): TaskUsage {
  return tasks.reduce((sum, task) => addTaskUsage(sum, task.usage), NO_USAGE);
}

/** Why pipeline `id`, having spent `usage`, may not make another model call, or null. It names every place the limit may come from. */
export function budgetGap(id: number, usage: TaskUsage, limits: { maxPipelineSteps: number; pipelineTokenBudget: number }): string | null {
  if (usage.calls >= limits.maxPipelineSteps) {
    return `step budget used up: pipeline #${id} made ${usage.calls} of ${limits.maxPipelineSteps} model calls (set by --max-pipeline-steps, MAX_PIPELINE_STEPS or limits.maxPipelineSteps)`;
  }
  const tokens = usage.inputTokens + usage.outputTokens;
  if (tokens >= limits.pipelineTokenBudget) {
    return `token budget used up: pipeline #${id} used ${tokens.toLocaleString('en-US')} tokens (limit ${limits.pipelineTokenBudget.toLocaleString('en-US')}, set by --token-budget-pipeline, TOKEN_BUDGET_PIPELINE or limits.tokenBudgetPipeline)`;
  }
  return null;
}

/** No task of the pipeline on the board; when some task files cannot be read, they may be its: named. */
export function noPipeline(board: Pick<TaskBoardLike, 'problems'>, pipeline: number): AutoteamError {
  const skipped = board.problems();
  const unread = skipped.length ? ` that can be read (the board skips ${skipped.map((problem) => problem.message).join('; ')})` : '';
  return new AutoteamError(`there is no pipeline #${pipeline}${unread}`, 'NOT_FOUND');
}
