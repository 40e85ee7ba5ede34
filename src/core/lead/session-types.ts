import type { TeammateExit } from '../agent/manager.js';
import type { TeammateSettings } from '../agent/settings.js';
import type { FromWorker } from '../agent/worker-protocol.js';
import type { Board } from '../board/board.js';
import type { Message } from '../board/schemas.js';
import type { ModelSpec } from '../model/factory.js';
import type { PendingQuestion } from './questions.js';
import type { LeadHand } from '../config/project-config.js';
import type { TeamEvent } from '../events/schema.js';

/** What a lead session is made of, and what it tells the front ends. */

export interface TeamMemberSpec {
  name: string;
  role: string;
  prompt?: string;
}

export const DEFAULT_TEAM: readonly TeamMemberSpec[] = [
  { name: 'analyst', role: 'analyst' },
  { name: 'engineer', role: 'engineer' },
  { name: 'reviewer', role: 'reviewer' },
];

export interface LeadSessionOptions {
  rootDir: string;
  model: ModelSpec;
  settings?: Partial<TeammateSettings>;
  /** Answer the analyst's questions with a simulated user instead of the person. */
  auto?: boolean;
  team?: string;
  /** Poll the lead's inbox this often even without watcher events. */
  reconcileMs?: number;
  /**
   * The person's repository for worktrees: a path (`--repo`), false for none (`--no-worktree`), or
   * absent to use the repository the board is in, if any.
   */
  repo?: string | false;
  /** The board, opened by the front end (default: the file board in rootDir). */
  board?: Board;
  /** A model per role (autoteam.config.json); roles not named use `model`. */
  models?: Readonly<Record<string, ModelSpec>>;
  /** The lead agent's file and shell tools (autoteam.config.json `lead.tools`; default all four). */
  leadTools?: readonly LeadHand[];
  /** autoteam.config.json `autoMerge`: run the merge queue whenever a pipeline is approved. */
  autoMerge?: boolean;
  /** The person types the REPL's commands to this session: what it says may name them (`/spawn`). */
  repl?: boolean;
}

/** Everything the front ends (REPL, line mode, headless run) render. */
export type LeadEvent =
  /** An event of the board's log (every thread and process of the team), in the log's order. */
  | { type: 'team'; event: TeamEvent }
  | { type: 'teammate'; event: FromWorker }
  | { type: 'teammate_exit'; exit: TeammateExit }
  /** `resumed`: left pending by an earlier lead (no event of the log says it since this session began). */
  | { type: 'question'; question: PendingQuestion; resumed?: boolean }
  | { type: 'answered'; question: PendingQuestion; answer: string; by: 'person' | 'simulated user' }
  /** Its task was cancelled, failed, completed or removed: nobody waits for the answer any more. */
  | { type: 'question_withdrawn'; question: PendingQuestion; reason: string }
  | { type: 'pipeline'; pipeline: number; status: string; content: string }
  | { type: 'plan'; requestId: string; from: string; plan: string }
  | { type: 'message'; message: Message }
  | { type: 'board' }
  | { type: 'error'; code: string; message: string }
  /** Something the person should know that is not an error (a board taken over, a teammate found dead). */
  | { type: 'notice'; text: string };
