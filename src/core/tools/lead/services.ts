import type { Message, Task, TeamConfig } from '../../board/schemas.js';

/** A general task the lead posts (not a pipeline's stage). */
export interface GeneralTaskInput {
  subject: string;
  description: string;
  /** Only teammates with this role may claim it (null: anyone). */
  role: string | null;
  blockedBy: number[];
  /** The teammate must get its plan approved first. */
  requirePlan: boolean;
}

/**
 * What the lead's tools may do: commands and queries, never the board, mailbox or pipeline behind
 * them. The lead session provides it (declared here, below the session, to keep the imports one way).
 */
export interface LeadServices {
  readonly lead: string;
  /** Posts a requirement as a new pipeline. */
  post(requirement: string): Promise<Task>;
  /** Posts a general task, through the person's TaskCreated hooks (a refused one comes back cancelled). */
  createTask(input: GeneralTaskInput): Promise<Task>;
  /** The board's tasks. */
  tasks(): Task[];
  /** One task; throws, naming it, when it is missing or cannot be read. */
  readTask(id: number): Task;
  /** The team: its name, its lead, and every member's role, status and task. */
  team(): TeamConfig;
  spawn(name: string, role: string, prompt?: string): void;
  /** The shutdown protocol: its exit when the session ran it, a line when another process was asked, or null. */
  requestShutdown(name: string): Promise<unknown>;
  decidePlan(requestId: string, approve: boolean, feedback?: string): Promise<void>;
  takeUnread(): Message[];
}
