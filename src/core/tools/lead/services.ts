import type { Message, Task } from '../../board/schemas.js';
import type { TaskBoardLike as TaskBoard } from '../../board/task-rules.js';
import type { Mailbox } from '../../board/mailbox.js';
import type { Pipeline } from '../../stages/pipeline.js';

/** What the lead's tools may do; the lead session provides it (kept narrow to avoid a cycle). */
export interface LeadServices {
  readonly lead: string;
  readonly board: TaskBoard;
  readonly mailbox: Mailbox;
  readonly pipeline: Pipeline;
  post(requirement: string): Promise<Task>;
  spawn(name: string, role: string, prompt?: string): unknown;
  requestShutdown(name: string): Promise<unknown>;
  decidePlan(requestId: string, approve: boolean, feedback?: string): Promise<void>;
  takeUnread(): Message[];
}
