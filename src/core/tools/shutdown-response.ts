import { z } from 'zod';
import { defineTool, toolError } from './tool.js';

export const shutdownResponseTool = defineTool({
  name: 'shutdown_response',
  description:
    'Answer a shutdown_request from the lead. approve=true stops you after this turn (your task is handed back to the board); approve=false keeps you working, with a reason.',
  inputSchema: z.object({
    request_id: z.string().min(1),
    approve: z.boolean(),
    reason: z.string().optional(),
  }),
  async run({ request_id, approve, reason }, ctx) {
    const store = ctx.requests;
    let request;
    try {
      request = store.get(request_id);
    } catch (error) {
      return toolError((error as Error).message);
    }
    if (request.kind !== 'shutdown' || request.to !== ctx.agent.name) {
      return toolError(`request ${request_id} is not a shutdown request addressed to ${ctx.agent.name}`);
    }
    await store.resolve(request_id, approve, reason);
    await ctx.mailbox.send(ctx.agent.name, request.from, reason ?? (approve ? 'shutting down' : 'declined'), 'shutdown_response', {
      requestId: request_id,
      approve,
    });
    return approve
      ? { content: 'Shutdown approved; stopping.', signal: { kind: 'exit', reason: `shutdown approved (${request_id})` } }
      : { content: 'Shutdown declined; continue your work.' };
  },
});
