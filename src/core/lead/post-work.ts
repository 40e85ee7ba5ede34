import type { Board } from '../board/board.js';
import type { Stage, Task } from '../board/schemas.js';
import { Pipeline } from '../stages/pipeline.js';
import type { StageRegistry } from '../stages/stage-registry.js';
import { type LeaderView } from './lead-api.js';
import { leaderOf, repoBesideLead } from './board-lead.js';
import { openRepository } from './repository.js';
import type { RepositorySettings } from '../git/remote-branch.js';

export interface PostWorkOptions {
  stages?: StageRegistry;
  /** As the lead's `--repo` (false: `--no-worktree`): in repository mode each pipeline gets its worktree and branch now. */
  repo?: string | false;
  startStage?: Stage;
  /** What finding the repository says (the branch pipelines start from, a working tree with changes). */
  notice?: (text: string) => void;
  /** `repository.remote`: each pipeline's branch is made on this remote instead. */
  remote?: RepositorySettings;
}

/**
 * Posts requirements (a pipeline each) without running a team or taking the lead's lease, as the
 * lead named in the registry: beside a lead in another process, which works them as its own, or with
 * nobody there, when they wait on the board. Returns each pipeline's first task, and who leads.
 */
export async function postWork(board: Board, requirements: readonly string[], options: PostWorkOptions = {}): Promise<{ tasks: Task[]; leader: LeaderView }> {
  const pipelines = new Pipeline(board.tasks, board.mailbox, { events: board.sink, ...(options.stages ? { stages: options.stages } : {}) });
  // The worktree and branch are made here, as the lead makes them, so any teammate can work the pipeline.
  const notice = options.notice ?? (() => undefined);
  const leader = board.lease().read();
  const repo = repoBesideLead(leader, options.repo, options.remote, notice);
  const repository = await openRepository(repo, board.rootDir, notice, options.remote);
  pipelines.useRepository(repository);
  const by = board.registry.read().lead;
  const tasks: Task[] = [];
  for (const requirement of requirements) tasks.push(await pipelines.post(requirement, { by, ...(options.startStage ? { startStage: options.startStage } : {}) }));
  const beside = repo === false ? null : remoteNotice(board.tasks.list(), tasks);
  if (beside) notice(beside);
  return { tasks, leader: leaderOf(leader) };
}

/**
 * Pipelines just posted from a place that names no remote, on a board where an earlier pipeline's
 * branch lives on one (`repository.remote` of another folder): said, not guessed, since the new ones
 * work in this folder's repository or in a folder, where the other machines' teammates cannot reach
 * them. Null when they branch on a remote too, or none before them does. (`--no-worktree` asks for
 * folders: its callers do not ask.)
 */
export function remoteNotice(tasks: readonly Task[], posted: readonly Task[]): string | null {
  if (posted.length === 0 || posted.some((task) => task.artifacts.git?.remote)) return null;
  const mine = new Set(posted.map((task) => task.pipeline));
  const onRemote = tasks.findLast((task) => task.artifacts.git?.remote && !mine.has(task.pipeline));
  if (!onRemote) return null;
  const ids = posted.map((task) => `#${task.pipeline}`).join(', ');
  const git = posted[0]!.artifacts.git;
  const where = git ? `on a branch of this folder's repository (${git.branch}${posted.length > 1 ? ', …' : ''})` : 'in a folder (workspace/<n>)';
  return `pipeline #${onRemote.pipeline} of this board branches on the remote ${onRemote.artifacts.git!.remote}, and this folder names no remote: pipeline${posted.length > 1 ? 's' : ''} ${ids} work${posted.length > 1 ? '' : 's'} ${where}; give --remote (or repository.remote in autoteam.config.json) to branch ${posted.length > 1 ? 'them' : 'it'} there`;
}
