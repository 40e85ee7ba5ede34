import { type Command, Option } from 'commander';
import { openBoard } from '../core/board/board.js';
import type { Stage } from '../core/board/schemas.js';
import { loadProjectConfig } from '../core/config/project-config.js';
import { postWork } from '../core/lead/post-work.js';
import { roleCovered } from '../core/board/team-registry.js';
import { HOST } from '../core/board/liveness.js';
import type { Member } from '../core/board/schemas.js';
import { ANY_ROLE } from '../core/board/task-checks.js';
import { postedLine, WHO_ANSWERS } from '../frontend/format.js';
import type { LeaderView } from '../core/lead/lead-api.js';
import { checkRequirement } from '../core/stages/requirement.js';
import { BUILTIN_REGISTRY, StageRegistry } from '../core/stages/stage-registry.js';
import { boardDir, boardOption, boardUrl, dirOption, remoteOf, unusedRemoteNote } from './board-options.js';
import { requirementsFileOption, requirementsFrom } from './requirements-file.js';

/**
 * `autoteam post`: requirements onto the board without waiting for them — beside a running lead (the
 * REPL or a `run`, which holds the lease; post takes none), or with nobody there (the tasks wait).
 */
export function registerPostCommand(program: Command, helpers: { repoOptions: (command: Command) => Command; repoChoice: (options: Record<string, unknown>) => { repo?: string | false } }): void {
  const post = program
    .command('post')
    .description('post requirements (a pipeline each) and return at once: a running lead or workers on this board pick them up')
    .argument('[requirement...]', 'what you want built; each argument is one requirement (quote it)')
    .addOption(requirementsFileOption())
    .addOption(new Option('--start-stage <stage>', 'skip earlier stages').choices(BUILTIN_REGISTRY.starts()))
    .option('--json', 'print the pipeline and task ids as JSON')
    .option('--remote <url>', 'make each branch on this git remote (config repository.remote)')
    .addOption(dirOption())
    .addOption(boardOption());
  helpers.repoOptions(post).action(async (words: string[], options: Record<string, unknown>, command: Command) => {
    const requirements = requirementsFrom(words, options.file, command);
    // All or nothing: a refused requirement posts none of them.
    for (const requirement of requirements) checkRequirement(requirement);
    const dir = boardDir(command);
    const project = loadProjectConfig(dir);
    const remote = remoteOf(options, project);
    // Contradicting flags are refused before the board is opened (and made).
    const repo = helpers.repoChoice(options);
    const unused = unusedRemoteNote(options, project.repository?.remote);
    if (unused) console.error(unused);
    const board = await openBoard(boardUrl(command) ?? dir, dir);
    const stages = StageRegistry.from(project.stages);
    try {
      const { tasks, leader } = await postWork(board, requirements, {
        stages,
        ...repo,
        ...(typeof options.startStage === 'string' ? { startStage: options.startStage as Stage } : {}),
        notice: (text) => console.error(`note: ${text}`),
        ...(remote !== undefined ? { remote: { remote, ...(project.repository?.base ? { base: project.repository.base } : {}) } } : {}),
      });
      // With no lead, the live workers: those of every role the pipelines need from where they start take them; else who would.
      const roles = rolesFrom(stages, tasks[0]?.stage ?? null);
      const who = whoWorks(leader, roles.length ? roles : undefined, coveredBeside(board.registry, leader));
      if (options.json) {
        const posted = tasks.map((task) => ({ pipeline: task.pipeline, task: task.id, stage: task.stage, subject: task.subject, ...(task.artifacts.git ? { branch: task.artifacts.git.branch, worktree: task.artifacts.git.worktree } : {}) }));
        console.log(JSON.stringify(posted, null, 2));
        // Said beside the JSON, not in it: a script reads the ids, a person the note.
        console.error(`note: ${who}`);
        return;
      }
      for (const task of tasks) {
        console.log(postedLine(task));
      }
      console.log(who);
    } finally {
      await board.close();
    }
  });
}

/**
 * Who works tasks just put on the board: the lead that holds it and its team; with no lead, the live
 * workers (`covered`: a live member of the role, or of role any; beside a lead, one of its own team
 * too, resting ones included: `coveredBeside`) — or nobody yet, and who would. A lead whose team
 * lacks a role the work needs (started with --no-team, or sized without it) is said to, with who would.
 * `roles`: the roles the work needs ('…': any of them).
 */
export function whoWorks(leader: LeaderView, roles: readonly string[] = ['…'], covered: (role: string) => boolean = () => false): string {
  // '…' (any role) is covered by a live member of role any, as `covered` reads it.
  const missing = roles.filter((role) => !covered(role));
  const workers = workerCommands(missing);
  if (leader.state === 'none' && missing.length === 0) return `no lead runs on this board: its live workers pick them up (autoteam tasks follows them); a clarifying question waits until ${WHO_ANSWERS}`;
  if (leader.state === 'none') return `no lead runs on this board: the tasks wait for one (autoteam; autoteam --auto < /dev/null works them and ends) or for workers (${workers})`;
  const lead = `the lead${leader.state === 'elsewhere' ? ` (pid ${leader.pid} on ${leader.host})` : ''}`;
  // Beside a lead, a task of no stage is its team's to take, whatever roles it has.
  if (missing.length === 0 || roles.includes('…')) return `${lead} and its team pick them up (autoteam tasks follows them)`;
  return `${lead} holds the board, but no teammate of role ${missing.join(', ')} runs there or elsewhere (a lead started with --no-team starts none): ${missing.length === 1 ? 'its stage waits' : 'their stages wait'} for workers (${workers})`;
}

/** `autoteam worker --role engineer, and one with --role reviewer`: the workers that would take `roles`' tasks. */
export function workerCommands(roles: readonly string[]): string {
  return roles.map((role, i) => (i === 0 ? `autoteam worker --role ${role}` : `one with --role ${role}`)).join(', and ');
}

/** `covered` beside a live lead: a live member of the role (or of any), or a member of the lead's own team, resting or not. */
export function coveredBeside(registry: { members(): Member[] }, leader: LeaderView): (role: string) => boolean {
  let members: Member[];
  try {
    members = registry.members();
  } catch {
    return () => false; // a team config that cannot be read is said where a session starts
  }
  const leads = (member: Member) => leader.state !== 'none' && member.pid === leader.pid && (member.host ?? HOST) === leader.host;
  return (role) => roleCovered(members, role) || members.some((member) => (member.role === role || member.role === ANY_ROLE) && leads(member));
}

/** The roles of the stages a pipeline goes through from `stage` on (sending back included); none for a task of no stage. */
export function rolesFrom(stages: StageRegistry, stage: string | null): string[] {
  return stage && stages.has(stage) ? [...new Set(stages.reachable(stage).map((definition) => definition.role))] : [];
}
