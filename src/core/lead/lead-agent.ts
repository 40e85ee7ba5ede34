import { compactConversation } from '../agent/compaction.js';
import { identityMessages } from '../agent/identity.js';
import { type LoopOutcome, runLoop } from '../agent/loop.js';
import type { Task } from '../board/schemas.js';
import type { Fence } from '../board/task-types.js';
import { type LeadHand, LEAD_HANDS } from '../config/project-config.js';
import type { ModelMessage } from '../model/types.js';
import { AutoteamError } from '../errors.js';
import { taskPrompt } from '../stages/handoff.js';
import { MAX_REQUIREMENT_BYTES } from '../stages/requirement.js';
import { leadTools } from '../tools/lead/index.js';
import type { ToolContext, ToolDefinition } from '../tools/tool.js';
import { leadHands, leadWorkplace } from './lead-hands.js';
import { TeammateHooks } from '../agent/teammate-hooks.js';
import type { TeammateSettings } from '../agent/settings.js';
import type { Board } from '../board/board-types.js';
import type { EventSink } from '../events/emitter.js';
import type { ModelClient } from '../model/types.js';
import type { LeadServices } from '../tools/lead/services.js';
import type { Trace } from '../trace/trace.js';

const TEAM_PROMPT = [
  'You are the lead of a small autonomous software team: an analyst, an engineer and a reviewer, each working',
  'on its own. You talk with a person. When they describe something they want built, post it with',
  'create_task(requirement): the team takes it from there (requirements → implementation → review).',
  'Use list_tasks, get_task and list_teammates to answer questions about progress; spawn_teammate,',
  'shutdown_request and plan_approval to manage the team.',
];

/** The lead's system prompt: its team tools, and what its own hands may do. */
export function leadSystemPrompt(hands: readonly LeadHand[] = LEAD_HANDS, folder = 'your folder'): string {
  const own = hands.length
    ? [
        `You also have your own hands in ${folder}: ${hands.join(', ')}. Use them for small things the person asks`,
        'you directly — what is in the folder, what a file says, a one-line fix — and answer from what they return.',
        "Build real features through the team. The board's own files (.tasks, .team) are not yours to touch.",
      ]
    : ['You have no file or shell tools: ask the team (a general task) for anything that needs them.'];
  return [
    ...TEAM_PROMPT,
    ...own,
    'You may take a general task yourself with claim_task, and finish it with complete_task or fail_task.',
    'Be brief: one or two sentences back to the person.',
  ].join('\n');
}

/** The default prompt (all four hands). */
export const LEAD_SYSTEM_PROMPT = leadSystemPrompt();

/**
 * What the lead agent works with: the board's parts its tools' context holds (the same tools a
 * teammate has: messages, claims), its team tools' commands, and the session's model, trace and
 * event sink. The session makes it; no front end sees it.
 */
export interface LeadAgentHost {
  lead(): string;
  readonly rootDir: string;
  /** The repository's checkout in repository mode (the lead's own folder then), or null. */
  repositoryTop(): string | null;
  readonly settings: Partial<TeammateSettings>;
  readonly board: Pick<Board, 'tasks' | 'requests' | 'mailbox' | 'registry'>;
  readonly hands: readonly LeadHand[];
  readonly services: LeadServices;
  /** The lead's model (the session must have started). */
  model(): ModelClient;
  readonly trace: Trace;
  readonly sink: EventSink;
  readonly maxRequestTokens: number;
}

/** Every tool the lead agent is offered, by name: its team tools and its own hands. */
export function leadToolNames(host: Pick<LeadAgentHost, 'services' | 'hands'>): string[] {
  return [...leadTools(host.services), ...leadHands(host.hands)].map((tool) => tool.name);
}

export interface LeadReply {
  text: string;
  outcome: LoopOutcome;
}

/**
 * The lead agent behind the REPL's free text: the same tool loop as the teammates, with the lead's
 * team tools and its own hands (file and shell tools in its folder, through a teammate's sandbox).
 * A general task it claims is worked at once, in the same conversation, under the task's lease.
 */
export class LeadAgent {
  private messages: ModelMessage[] = [];
  private readonly controller = new AbortController();
  /** The person's hooks around the lead's own tool calls, as around a teammate's. */
  private readonly hooks: TeammateHooks;

  constructor(
    private readonly host: LeadAgentHost,
    private readonly options: { maxTurns?: number; tokenBudget?: number } = {},
  ) {
    this.hooks = new TeammateHooks(host.settings.hooks, host.rootDir, host.sink);
  }

  async handle(text: string): Promise<LeadReply> {
    // What the person says may become a requirement word for word: the same limit, refused before
    // the model sees it (past the request ceiling it would be summarised, and the words lost).
    const bytes = Buffer.byteLength(text);
    if (bytes > MAX_REQUIREMENT_BYTES) {
      throw new AutoteamError(
        `a message to the lead is at most ${MAX_REQUIREMENT_BYTES / 1024} KB (this one is ${Math.ceil(bytes / 1024)} KB): put the details in a file in the board's folder and refer to it`,
        'INVALID_REQUIREMENT',
      );
    }
    const { host } = this;
    const lead = host.lead();
    const team = host.board.registry.read().team;
    if (this.messages.length === 0) this.messages = identityMessages(lead, 'lead', team);
    this.messages.push({ role: 'user', content: text });
    const place = leadWorkplace(host.rootDir, host.repositoryTop(), host.settings);
    const ctx: ToolContext = {
      agent: { name: lead, role: 'lead', team },
      rootDir: host.rootDir,
      workspace: place.folder,
      offLimits: place.offLimits,
      sandbox: place.sandbox,
      board: host.board.tasks,
      requests: host.board.requests,
      mailbox: host.board.mailbox,
      registry: host.board.registry,
      task: null,
      fence: null,
      signal: this.controller.signal,
      limits: place.limits,
      record: async (event, detail) => {
        // Only a task the lead claimed has a history to add to.
        if (ctx.task && ctx.fence) await host.board.tasks.update(ctx.task.id, {}, { fence: ctx.fence, event, ...(detail ? { detail } : {}) }).catch(() => undefined);
      },
      waitForMessage: async () => null,
      log: () => undefined,
    };
    const start = this.messages.length;
    const system = leadSystemPrompt(host.hands, place.folder);
    let { outcome } = await this.loop(ctx, system, [...leadTools(host.services), ...leadHands(host.hands)]);
    if (outcome.kind === 'claimed') outcome = await this.work(ctx, system, outcome.task);
    // Stopped by the runtime, not by an answer: said as such, never as the model's last words.
    const stopped =
      outcome.kind === 'max_turns'
        ? `(stopped after ${outcome.turns} model turns without an answer: /tasks shows what it did)`
        : outcome.kind === 'refused'
          ? `(stopped: ${outcome.reason}; /tasks shows what it did)`
          : outcome.kind === 'aborted'
            ? `(stopped: ${outcome.reason})`
            : null;
    // A conversation must end on the assistant's turn before the next user line.
    const last = this.messages[this.messages.length - 1];
    if (last?.role === 'user') this.messages.push({ role: 'assistant', content: stopped ?? 'Done.' });
    const reply = this.messages
      .slice(start)
      .filter((m) => m.role === 'assistant')
      .flatMap((m) => (typeof m.content === 'string' ? [m.content] : m.content.flatMap((b) => (b.type === 'text' ? [b.text] : []))))
      .at(-1);
    return { text: outcome.kind === 'end_turn' ? outcome.text : stopped ?? reply ?? '', outcome };
  }

  cancel(): void {
    this.controller.abort(new Error('cancelled'));
  }

  /**
   * A general task the lead claimed: worked now with its tools plus complete_task / fail_task, the
   * lease renewed meanwhile, and ended by the same rules as a teammate's general task.
   */
  private async work(ctx: ToolContext, system: string, task: Task): Promise<LoopOutcome> {
    const { host } = this;
    const fence: Fence = { owner: host.lead(), token: task.claims };
    ctx.task = task;
    ctx.fence = fence;
    const renew = setInterval(() => void host.board.tasks.renewLease(task.id, fence).catch(() => undefined), 5_000);
    this.messages.push({ role: 'user', content: `${taskPrompt(task)}\n\nYou claimed this task: do it with your tools, then end it with complete_task or fail_task.` });
    try {
      const { outcome } = await this.loop(ctx, system, [...leadTools(host.services), ...leadHands(host.hands, true)]);
      const current = host.board.tasks.get(task.id);
      const mine = current.status === 'in_progress' && current.owner === fence.owner && current.claims === fence.token;
      if (!mine) return outcome;
      if (outcome.kind === 'end_turn') await host.board.tasks.complete(task.id, fence, outcome.text || 'done');
      else if (outcome.kind === 'fail' || outcome.kind === 'max_turns') await host.board.tasks.fail(task.id, fence, outcome.kind === 'fail' ? outcome.reason : 'max turns reached');
      else await host.board.tasks.release(task.id, fence, `${host.lead()}: ${'reason' in outcome ? outcome.reason : outcome.kind}`, 'lead');
      return outcome;
    } finally {
      clearInterval(renew);
      ctx.task = null;
      ctx.fence = null;
    }
  }

  private loop(ctx: ToolContext, system: string, tools: ToolDefinition[]) {
    const { host } = this;
    const lead = host.lead();
    return runLoop({
      model: host.model(),
      system,
      tools,
      messages: this.messages,
      ctx,
      agent: { name: lead, role: 'lead', stage: null },
      maxTurns: this.options.maxTurns ?? 8,
      trace: host.trace,
      tokenBudget: this.options.tokenBudget ?? 40_000,
      maxRequestTokens: host.maxRequestTokens,
      ...(host.settings.prices ? { prices: host.settings.prices } : {}),
      events: host.sink,
      ...(this.hooks.active ? { gate: this.hooks.gate(() => ({ team: host.board.registry.read().team, agent: lead, role: 'lead', task: ctx.task, workspace: ctx.workspace })) } : {}),
      compact: (current) =>
        compactConversation({
          model: host.model(),
          messages: current,
          identity: identityMessages(lead, 'lead', host.board.registry.read().team),
          taskPrompt: 'Continue talking with the person.',
          agent: { name: lead, role: 'lead', stage: null, task: ctx.task?.id ?? null },
          maxRequestTokens: host.maxRequestTokens,
          events: host.sink,
          ...(host.settings.prices ? { prices: host.settings.prices } : {}),
          pipeline: ctx.task?.pipeline ?? null,
          trace: host.trace,
        }),
    });
  }
}
