import { broadcastTool } from '../broadcast.js';
import { sendMessageTool } from '../send-message.js';
import type { ToolDefinition } from '../tool.js';
import { createTaskTool } from './create-task.js';
import { decidePlanTool } from './decide-plan.js';
import { getTaskTool } from './get-task.js';
import { listTasksTool } from './list-tasks.js';
import { listTeammatesTool } from './list-teammates.js';
import { readLeadInboxTool } from './read-lead-inbox.js';
import type { LeadServices } from './services.js';
import { shutdownRequestTool } from './shutdown-request.js';
import { spawnTeammateTool } from './spawn-teammate.js';

export type { LeadServices } from './services.js';

/** The lead agent's tool set. */
export function leadTools(lead: LeadServices): ToolDefinition[] {
  return [
    createTaskTool(lead),
    listTasksTool(lead),
    getTaskTool(lead),
    spawnTeammateTool(lead),
    listTeammatesTool(lead),
    sendMessageTool,
    broadcastTool,
    readLeadInboxTool(lead),
    shutdownRequestTool(lead),
    decidePlanTool(lead),
  ] as ToolDefinition[];
}
