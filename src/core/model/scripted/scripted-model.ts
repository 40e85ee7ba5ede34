import type { HandoffData } from '../../stages/handoff.js';
import type { AssistantBlock, ModelClient, ModelRequest, ModelResponse, OfflineContext } from '../types.js';
import { analystTurn } from './analyst.js';
import { allText, type Decision, lastUserText, parseSummaryLine, summarizeCalls, type ToolCall, toolCalls } from './conversation.js';
import { engineerTurn } from './engineer.js';
import { generalTurn } from './general.js';
import { leadTurn } from './lead.js';
import { reviewerTurn } from './reviewer.js';
import { REAL_MODEL_HINT } from './repertoire.js';

/** The offline model's stage programs, by the signal tool that ends the stage they work. */
const STAGE_PROGRAMS: ReadonlyArray<[string, (handoff: HandoffData, calls: readonly ToolCall[]) => Decision]> = [
  ['complete_requirements_analysis', analystTurn],
  ['submit_for_review', engineerTurn],
  ['approve_code', reviewerTurn],
];

/**
 * The offline default: deterministic per-role policies that read the conversation, including the
 * real results of the tools they called, and choose the next tool calls. It never writes a tool
 * result itself. Token counts are estimates (4 characters a token).
 */
export class ScriptedModel implements ModelClient {
  readonly id = 'offline-scripted';
  readonly label = 'offline scripted model';
  readonly provider = 'offline';
  private calls = 0;

  async create(request: ModelRequest, offline: OfflineContext = {}): Promise<ModelResponse> {
    if (request.signal?.aborted) throw request.signal.reason ?? new Error('aborted');
    const decision = this.decide(request, offline);
    const offered = new Set(request.tools.map((tool) => tool.name));
    const content: AssistantBlock[] = [];
    if (decision.text) content.push({ type: 'text', text: decision.text });
    for (const call of decision.calls) {
      // A policy never calls a tool it was not offered; the loop would refuse it anyway.
      if (!offered.has(call.name)) continue;
      content.push({ type: 'tool_use', id: `toolu_offline_${++this.calls}`, name: call.name, input: call.input });
    }
    const usesTools = content.some((block) => block.type === 'tool_use');
    const inputChars = request.system.length + JSON.stringify(request.messages).length + JSON.stringify(request.tools).length;
    return {
      content: content.length ? content : [{ type: 'text', text: 'Nothing to do.' }],
      stopReason: usesTools ? 'tool_use' : 'end_turn',
      usage: {
        inputTokens: Math.ceil(inputChars / 4),
        outputTokens: Math.ceil(JSON.stringify(content).length / 4),
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
      },
      model: this.id,
    };
  }

  private decide(request: ModelRequest, context: OfflineContext): Decision {
    const agent = request.agent ?? { name: 'agent', role: 'engineer', stage: null };
    const offered = new Set(request.tools.map((tool) => tool.name));
    // Its own earlier summary (a format it writes to read back), then the calls the log shows.
    if (agent.purpose === 'compaction') return { text: summarizeCalls([...summaryCalls(allText(request.messages)), ...(context.calls ?? [])]), calls: [] };
    const calls = toolCalls(request.messages);
    if (context.shutdownRequest && offered.has('shutdown_response')) {
      return { text: 'Stopping: the lead asked the team to shut down.', calls: [{ name: 'shutdown_response', input: { request_id: context.shutdownRequest, approve: true, reason: 'what I have not finished goes back to the board, to be picked up again' } }] };
    }
    if (agent.role === 'lead') {
      // The lead's conversation spans many lines from the person: only this line's calls count.
      let index = request.messages.length - 1;
      while (index > 0 && !(request.messages[index]!.role === 'user' && typeof request.messages[index]!.content === 'string')) index--;
      const line = request.messages[index]?.content;
      const since = toolCalls(request.messages.slice(index));
      // A general task the lead claimed: worked as a teammate works one.
      if (context.task) return generalTurn(context.task, since);
      return leadTurn(typeof line === 'string' ? line : lastUserText(request.messages), since, offered);
    }
    // A message between tasks: read, and said so; what the runtime wrote around it is not echoed.
    if (!context.task) return { text: 'I read the message; the offline model does not act on messages (a real model does).', calls: [] };
    if (!agent.stage) return generalTurn(context.task, calls);
    // Stage work reads the handoff as data, never the runtime's prose.
    const handoff = context.handoff;
    if (!handoff) return { text: 'No handoff came with this stage task; I cannot work it offline.', calls: [] };
    // A stage's program is chosen by the signal it may end the stage with, as a model reads its tools.
    const program = STAGE_PROGRAMS.find(([signal]) => offered.has(signal));
    if (program) return program[1](handoff, calls);
    // A stage from autoteam.config.json: the offline model has no policy for it, and says so.
    return {
      text: 'I have no policy for this stage.',
      calls: [{ name: 'fail_task', input: { reason: `the offline model has no policy for the '${handoff.stage}' stage — ${REAL_MODEL_HINT}` } }],
    };
  }
}

/** The calls an earlier offline summary lists (`- called NAME {input} → ok: …`, its own format). */
function summaryCalls(text: string): ToolCall[] {
  return text.split('\n').flatMap((line) => {
    const call = parseSummaryLine(line);
    return call ? [call] : [];
  });
}
