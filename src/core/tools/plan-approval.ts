import { z } from 'zod';
import { defineTool, reportStatus, settingsOf } from './tool.js';

/** The feedback of a plan its teammate stopped waiting for (a timeout, a shutdown): decided, by nobody. */
export const PLAN_WITHDRAWN = 'withdrawn: no decision came while its teammate waited';

export const planApprovalTool = defineTool({
  name: 'plan_approval',
  description:
    'Submit your plan to the lead and wait for the decision. Returns APPROVED, or REJECTED with feedback: then revise the plan and submit again. Do not start the work before approval when your task asks for a plan.',
  inputSchema: z.object({ plan: z.string().min(1).describe('the steps you intend to take') }),
  async run({ plan }, ctx) {
    const store = ctx.requests;
    const lead = ctx.registry.read().lead;
    const request = await store.create({ kind: 'plan', from: ctx.agent.name, to: lead, task: ctx.task?.id ?? null, plan });
    const withdraw = () => store.resolve(request.id, false, PLAN_WITHDRAWN).catch(() => undefined);
    await ctx.mailbox.send(ctx.agent.name, lead, plan, 'plan_approval_request', { requestId: request.id, task: ctx.task?.id ?? null });
    await ctx.record('plan_submitted', `${request.id}: ${plan.slice(0, 200)}`);
    await reportStatus(ctx, 'waiting', `waiting for plan approval (${request.id})`);
    const reply = await ctx.waitForMessage(
      (m) => m.type === 'plan_approval_response' && m.requestId === request.id,
      settingsOf(ctx).planTimeoutMs,
    ).catch((error: unknown) => withdraw().then(() => Promise.reject(error)));
    await reportStatus(ctx, 'working');
    // A plan nobody decided is withdrawn, so no later session takes it for one still waiting.
    if (!reply) {
      await withdraw();
      return { content: `No decision on ${request.id} in time; go idle or ask the lead.`, isError: true };
    }
    const approved = reply.approve === true;
    await ctx.record(approved ? 'plan_approved' : 'plan_rejected', reply.content);
    return { content: approved ? `APPROVED (${request.id}). ${reply.content}` : `REJECTED (${request.id}). Feedback: ${reply.content}` };
  },
});
