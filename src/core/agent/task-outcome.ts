import type { Task } from '../board/schemas.js';
import type { Fence } from '../board/task-types.js';
import type { TaskBoardLike } from '../board/task-rules.js';
import type { ExitReason, ReleaseKind } from '../events/schema.js';
import type { Pipeline } from '../stages/pipeline.js';
import type { StageDefinition } from '../stages/stage.js';
import { redact } from '../trace/redact.js';
import type { LoopOutcome } from './loop.js';
import type { TaskEnds } from './task-ends.js';

/** What deciding a task from its loop's outcome needs of the teammate. */
export interface OutcomeHost {
  name: string;
  board: TaskBoardLike;
  pipeline: Pipeline;
  ends: TaskEnds;
  settings: { maxTurns: number };
  /** The teammate's own stop (a lost lease aborts only the task's signal). */
  signal: AbortSignal;
  note(task: Task | null, text: string): void;
  activity(task: number | null, text: string): void;
  exitWith(reason: string, why: ExitReason): void;
  /** Works a task the model claimed in the middle of this one. */
  workOnClaimed(task: Task): Promise<void>;
}

/** Where a task's work stands after a run of the loop. */
export interface RunState {
  /** The task's stage (null: a general task). */
  stage: StageDefinition | null;
  turnsLeft: number;
  /** Whether the model was already told once which tool finishes the stage. */
  nudged: boolean;
  /** Why the person's TaskCompleted hooks refused a general task's closing text, if they did. */
  blocked: string | null;
}

/** Another run of the loop, with what the model is told first. */
export interface Again {
  say: string;
  nudge: boolean;
}

/** What the loop's outcome does to the task, decided before anything is written. */
type Ending =
  | { kind: 'advance'; signal: Extract<LoopOutcome, { kind: 'transition' }> }
  | { kind: 'fail'; reason: string }
  | { kind: 'unfinished'; reason: string }
  | { kind: 'complete'; text: string }
  | { kind: 'release'; reason: string; release: ReleaseKind }
  | { kind: 'none'; left?: string };

/** The tools that end a task: its stage's signals, or complete_task / fail_task for a general task. */
function finishingTools(stage: StageDefinition | null): string {
  return stage ? Object.keys(stage.transitions).join(' or ') : 'complete_task or fail_task';
}

/**
 * How the loop's end decides the task (see the table in docs/ARCHITECTURE.md, Teammates): once more
 * with a word to the model, or settled — handed on by the pipeline, failed, completed, backed off as
 * an unfinished attempt, or released.
 */
export class TaskOutcome {
  constructor(private readonly host: OutcomeHost) {}

  /** Another run of the loop, or null once `task` (as the loop left it) is settled. */
  async afterLoop(task: Task, fence: Fence, outcome: LoopOutcome, state: RunState): Promise<Again | null> {
    if (outcome.kind === 'end_turn' && state.stage && !state.nudged && state.turnsLeft > 0) {
      return { say: `You have not finished this task. Continue, and end it with ${finishingTools(state.stage)}.`, nudge: true };
    }
    if (state.blocked && state.turnsLeft > 0) {
      return { say: `A hook blocked completing this task: ${redact(state.blocked)}\nAddress it, then finish.`, nudge: false };
    }
    if (outcome.kind === 'exit') this.host.exitWith(outcome.reason, 'shutdown_requested');
    const ending = this.ending(task, fence, outcome, state);
    await this.apply(task, fence, ending);
    // claim_task refuses while a task is in progress; if this one was finished first, work the new one.
    if (outcome.kind === 'claimed') await this.host.workOnClaimed(outcome.task);
    return null;
  }

  private ending(task: Task, fence: Fence, outcome: LoopOutcome, state: RunState): Ending {
    const stillMine = () => {
      const current = this.host.board.get(task.id);
      return current.status === 'in_progress' && current.owner === fence.owner && current.claims === fence.token;
    };
    // The claim ended under the work (a cancel, a takeover): nothing to write, but the person is told why it stopped.
    const gone = (): Ending => {
      const left = leftBecause(this.host.board.get(task.id), fence);
      return left ? { kind: 'none', left } : { kind: 'none' };
    };
    switch (outcome.kind) {
      case 'transition':
        return { kind: 'advance', signal: outcome };
      case 'fail':
        return { kind: 'fail', reason: outcome.reason };
      case 'max_turns':
        return { kind: 'fail', reason: `max turns (${this.host.settings.maxTurns}) reached` };
      case 'refused':
        // An attempt that looped on refused calls: backed off and tried again, as any unfinished one.
        return stillMine() ? { kind: 'unfinished', reason: outcome.reason } : gone();
      case 'end_turn':
        if (state.blocked) return { kind: 'unfinished', reason: `a hook blocked completing it: ${state.blocked}` };
        if (!stillMine()) return gone();
        // Told once which tool finishes the stage (the nudge); ending without it again is an unfinished attempt.
        if (state.stage) return { kind: 'unfinished', reason: `ended its turn without calling ${finishingTools(state.stage)}` };
        return { kind: 'complete', text: outcome.text || 'done' };
      case 'claimed':
        return stillMine() ? { kind: 'unfinished', reason: `switched to #${outcome.task.id}` } : gone();
      case 'idle':
        return stillMine() ? { kind: 'unfinished', reason: `went idle: ${outcome.reason}` } : gone();
      case 'exit':
      case 'aborted': {
        if (!stillMine()) return gone();
        const release = outcome.kind === 'exit' ? 'shutdown' : this.host.signal.aborted ? 'stopped' : 'lease_lost';
        return { kind: 'release', reason: outcome.reason, release };
      }
    }
  }

  private async apply(task: Task, fence: Fence, ending: Ending): Promise<void> {
    switch (ending.kind) {
      case 'advance': {
        const { tool, artifacts, result } = ending.signal;
        // Said before the lead hears that the pipeline ended: the person reads the step, then the outcome.
        await this.host.pipeline.advance(task, fence, { tool, artifacts, result }, (step) => {
          const next = step.next ? ` → #${step.next.id} ${step.next.stage}` : ` → pipeline ${step.status}`;
          if (step.ok) this.host.activity(task.id, `${tool}${next}`);
          else this.host.note(task, `${tool} refused: ${step.reason}`);
        });
        return;
      }
      case 'fail':
        await this.host.ends.fail(task, fence, ending.reason);
        return;
      case 'unfinished':
        await this.host.ends.unfinished(task, fence, ending.reason, 'unfinished');
        return;
      case 'complete':
        await this.host.board.complete(task.id, fence, ending.text);
        this.host.activity(task.id, `completed #${task.id}`);
        return;
      case 'release':
        await this.host.board.release(task.id, fence, `${this.host.name}: ${ending.reason}`, ending.release);
        this.host.activity(task.id, `released #${task.id} (${ending.reason})`);
        return;
      case 'none':
        if (ending.left) this.host.activity(task.id, ending.left);
        return;
    }
  }
}

/**
 * Why a teammate stopped work on a task whose claim `fence` no longer holds, as its line says it;
 * undefined when the claim ended by its own hand (a tool completed or failed the task).
 */
function leftBecause(current: Task, fence: Fence): string | undefined {
  const last = current.history.at(-1);
  if (current.owner === fence.owner && current.claims === fence.token && current.status !== 'cancelled' && current.status !== 'pending') return undefined;
  if (current.status === 'cancelled') {
    // A pipeline's cancel records `cancelled by <who>: <why>`; a task's own, its reason alone.
    const why = last?.event !== 'cancelled' ? 'cancelled' : last.detail?.startsWith('cancelled') ? last.detail : `cancelled by ${last.by}${last.detail ? `: ${last.detail}` : ''}`;
    return `stopped #${current.id}: ${why}`;
  }
  if (current.owner && current.owner !== fence.owner) return `stopped #${current.id}: ${current.owner} holds it now`;
  if (current.claims !== fence.token && current.status === 'in_progress') return `stopped #${current.id}: claimed again (claim ${current.claims})`;
  return `stopped #${current.id}: it is ${current.status} now`;
}
