import type { BlobStore } from '../board/blobs.js';
import type { Mailbox } from '../board/mailbox.js';
import type { RequestStore } from '../board/requests.js';
import type { MemberStatus, Task } from '../board/schemas.js';
import type { Fence } from '../board/task-types.js';
import type { TaskBoardLike } from '../board/task-rules.js';
import type { TeamRegistry } from '../board/team-registry.js';
import { containment, hiddenStartDir, Sandbox } from '../exec/sandbox.js';
import type { ToolContext } from '../tools/tool.js';
import type { EventInput } from '../events/schema.js';
import { redact } from '../trace/redact.js';
import { localGit } from '../stages/workspace.js';
import { TRUSTED_FILES } from '../config/trusted-files.js';
import type { TeammateSettings } from './settings.js';
import type { TeammateInbox } from './teammate-inbox.js';

/** What a teammate lends the tools it runs: who it is, its board, and how it reports. */
export interface ToolHost {
  name: string;
  role: string;
  settings: TeammateSettings;
  board: TaskBoardLike;
  registry: TeamRegistry;
  requests: RequestStore;
  blobs: BlobStore;
  mailbox: Mailbox;
  inbox: TeammateInbox;
  activity(task: number | null, line: string): void;
  /** The board's events (criteria, checks, questions). */
  emit(input: EventInput): void;
  setStatus(status: MemberStatus, task: number | null, reason?: string): Promise<void>;
  /** The environment's secret values (secretValues()), read once by the teammate: what its records are redacted with. */
  secrets: readonly string[];
}

/** The work at hand: a claimed task with its fence (or none, for messages), its workspace and signal. */
export interface ToolWork {
  task: Task | null;
  fence: Fence | null;
  workspace: string;
  signal: AbortSignal;
  /** Called once the claim is found superseded: the teammate stops writing into a shared workspace. */
  onFenceLost: (reason: string) => void;
}

/**
 * The context every tool call gets: a sandbox confined to the workspace (the board, the start folder
 * and the person's repository hidden), fenced board writes, and the teammate's inbox and status.
 */
export function toolContext(host: ToolHost, work: ToolWork): ToolContext {
  const { task, fence, workspace, signal, onFenceLost } = work;
  const policy = host.settings.sandbox;
  const stage = task?.stage ?? 'general';
  const sandbox = new Sandbox(
    {
      workspace,
      // The board, and the directory autoteam was started in (its .env, the person's project).
      hidden: [host.board.rootDir, ...hiddenStartDir(), ...(task?.artifacts.git ? [localGit(host.board.rootDir, task.artifacts.git).repo] : [])],
      network: policy.network.includes('*') || policy.network.includes(stage),
      limits: policy.limits,
      passEnv: policy.passEnv,
    },
    policy.mode === 'off' ? { kind: 'none', reason: 'turned off (--sandbox off)' } : containment(),
  );
  const ctx: ToolContext = {
    agent: { name: host.name, role: host.role, team: host.registry.read().team },
    rootDir: host.board.rootDir,
    workspace,
    // A worktree's change is merged into the person's repository: autoteam's own files stay out of it.
    ...(task?.artifacts.git ? { offLimits: TRUSTED_FILES } : {}),
    sandbox,
    claimLost: () => {
      if (!task || !fence) return null;
      const current = host.board.get(task.id);
      if (current.status === 'in_progress' && current.owner === fence.owner && current.claims === fence.token) return null;
      const why = `task #${task.id} is no longer yours (${current.status}, owner ${current.owner ?? 'none'}, claim ${current.claims}); nothing was written`;
      onFenceLost(why);
      return why;
    },
    board: host.board,
    requests: host.requests,
    blobs: host.blobs,
    mailbox: host.mailbox,
    registry: host.registry,
    task,
    fence,
    signal,
    limits: { commandTimeoutMs: host.settings.commandTimeoutMs, maxOutputChars: host.settings.maxOutputChars },
    settings: host.settings.runtime,
    record: async (event, detail, artifacts) => {
      if (!ctx.task || !ctx.fence) return;
      // The artifacts update runs under the task's lock, on the artifacts as they are then.
      const patch = artifacts ? { artifacts } : {};
      const clean = detail === undefined ? undefined : redact(detail, host.secrets);
      const result = await host.board.update(ctx.task.id, patch, { fence: ctx.fence, event, detail: clean });
      if (result.ok) ctx.task = result.task;
      // Our claim was taken over: stop at once instead of writing more into a shared workspace.
      else if (result.fenced) onFenceLost(result.reason);
    },
    // The task cancelled or taken over while its teammate waits (an answer, a plan decision): the wait
    // ends on the wake that change brings, and its claimLost ends the work (the lease's abort).
    waitForMessage: (match, timeoutMs) => host.inbox.waitFor(match, timeoutMs, signal, () => claimEnded(ctx)),
    log: (line) => host.activity(ctx.task?.id ?? null, line),
    emit: (input) => host.emit({ pipeline: ctx.task?.pipeline ?? null, task: ctx.task?.id ?? null, agent: host.name, role: host.role, ...input } as EventInput),
    setStatus: (status, reason) => host.setStatus(status, ctx.task?.id ?? null, reason),
  };
  return ctx;
}

/**
 * Whether the claim of `ctx` has ended. A task that cannot be read now (a replica not caught up, a
 * bad file) is not taken for gone: the next wake asks again, and the lease's renewal decides it.
 */
function claimEnded(ctx: ToolContext): boolean {
  try {
    return ctx.claimLost?.() != null;
  } catch {
    return false;
  }
}
