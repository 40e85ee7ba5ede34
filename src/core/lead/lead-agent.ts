import { DEFAULT_LIMITS, Sandbox } from '../exec/sandbox.js';
import fs from 'node:fs';
import path from 'node:path';
import { compactConversation } from '../agent/compaction.js';
import { identityMessages } from '../agent/identity.js';
import { type LoopOutcome, runLoop } from '../agent/loop.js';
import type { ModelMessage } from '../model/types.js';
import { leadTools } from '../tools/lead/index.js';
import type { ToolContext } from '../tools/tool.js';
import type { LeadSession } from './session.js';

export const LEAD_SYSTEM_PROMPT = [
  'You are the lead of a small autonomous software team: an analyst, an engineer and a reviewer, each working',
  'on its own. You talk with a person. When they describe something they want built, post it with',
  'create_task(requirement): the team takes it from there (requirements → implementation → review).',
  'Use list_tasks, get_task and list_teammates to answer questions about progress; spawn_teammate,',
  'shutdown_request and plan_approval to manage the team. Be brief: one or two sentences back to the person.',
].join('\n');

export interface LeadReply {
  text: string;
  outcome: LoopOutcome;
}

/** The lead agent behind the REPL's free text: the same tool loop as the teammates, with lead tools. */
export class LeadAgent {
  private messages: ModelMessage[] = [];
  private readonly controller = new AbortController();

  constructor(
    private readonly session: LeadSession,
    private readonly options: { maxTurns?: number; tokenBudget?: number } = {},
  ) {}

  async handle(text: string): Promise<LeadReply> {
    const { session } = this;
    const lead = session.lead;
    const team = session.mailbox.registry.read().team;
    if (this.messages.length === 0) this.messages = identityMessages(lead, 'lead', team);
    this.messages.push({ role: 'user', content: text });
    const workspace = path.join(session.rootDir, 'workspace', 'lead');
    fs.mkdirSync(workspace, { recursive: true });
    const ctx: ToolContext = {
      agent: { name: lead, role: 'lead', team },
      rootDir: session.rootDir,
      workspace,
      // The lead's tools start no process; the sandbox is there for the type's sake, fully closed.
      sandbox: new Sandbox({ workspace, hidden: [session.rootDir], network: false, limits: DEFAULT_LIMITS }),
      board: session.board,
      requests: session.requests,
      mailbox: session.mailbox,
      registry: session.mailbox.registry,
      task: null,
      fence: null,
      signal: this.controller.signal,
      limits: { commandTimeoutMs: 30_000, maxOutputChars: 8_000 },
      record: async () => undefined,
      waitForMessage: async () => null,
      log: () => undefined,
    };
    const start = this.messages.length;
    const { outcome } = await runLoop({
      model: session.leadModel,
      system: LEAD_SYSTEM_PROMPT,
      tools: leadTools(session),
      messages: this.messages,
      ctx,
      agent: { name: lead, role: 'lead', stage: null },
      maxTurns: this.options.maxTurns ?? 8,
      trace: session.trace,
      tokenBudget: this.options.tokenBudget ?? 40_000,
      maxRequestTokens: session.maxRequestTokens,
      compact: (current) =>
        compactConversation({
          model: session.leadModel,
          messages: current,
          identity: identityMessages(lead, 'lead', team),
          taskPrompt: 'Continue talking with the person.',
          agent: { name: lead, role: 'lead', stage: null },
          maxRequestTokens: session.maxRequestTokens,
        }),
    });
    // A conversation must end on the assistant's turn before the next user line.
    const last = this.messages[this.messages.length - 1];
    if (last?.role === 'user') this.messages.push({ role: 'assistant', content: 'Done.' });
    const reply = this.messages
      .slice(start)
      .filter((m) => m.role === 'assistant')
      .flatMap((m) => (typeof m.content === 'string' ? [m.content] : m.content.flatMap((b) => (b.type === 'text' ? [b.text] : []))))
      .at(-1);
    return { text: outcome.kind === 'end_turn' ? outcome.text : reply ?? '', outcome };
  }

  cancel(): void {
    this.controller.abort(new Error('cancelled'));
  }
}
