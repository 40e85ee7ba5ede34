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
  if (!repository?.remote && repo !== false) {
    // From a folder that knows no remote, beside pipelines whose branches live on one: said, not guessed.
    const onRemote = board.tasks.list().findLast((task) => task.artifacts.git?.remote);
    if (onRemote) notice(`pipeline #${onRemote.pipeline} of this board branches on the remote ${onRemote.artifacts.git!.remote}, and this folder names no remote: these pipelines work ${repository ? `on ${repository.top}` : 'in a folder (workspace/<n>)'}; give --remote (or repository.remote in autoteam.config.json) to branch them there`);
  }
  const by = board.registry.read().lead;
  const tasks: Task[] = [];
  for (const requirement of requirements) tasks.push(await pipelines.post(requirement, { by, ...(options.startStage ? { startStage: options.startStage } : {}) }));
  return { tasks, leader: leaderOf(leader) };
}
