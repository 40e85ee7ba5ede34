import type { TeammateSettings } from '../agent/settings.js';
import type { Board } from '../board/board-types.js';
import type { LeadHand } from '../config/project-config.js';
import type { ModelClient } from '../model/types.js';
import type { Pipeline } from '../stages/pipeline.js';
import type { LeadServices } from '../tools/lead/services.js';
import type { Trace } from '../trace/trace.js';
import type { LeadApi } from './lead-api.js';
import type { LeadAgentHost } from './lead-agent.js';

type SessionCommands = Pick<LeadApi, 'lead' | 'post' | 'spawn' | 'requestShutdown' | 'requestShutdownElsewhere' | 'decidePlan' | 'takeUnread'>;

/** The lead's team tools' commands: the session's own, and the few board reads and writes they need. */
export function leadServices(board: Board, pipelines: Pipeline, session: SessionCommands): LeadServices {
  return {
    get lead() {
      return session.lead;
    },
    post: (requirement) => session.post(requirement),
    async createTask(input) {
      const created = await board.tasks.create({
        subject: input.subject,
        description: input.description,
        role: input.role,
        blockedBy: input.blockedBy,
        artifacts: input.requirePlan ? { requirePlan: true } : {},
        by: session.lead,
        ...pipelines.held(),
      });
      // The person's TaskCreated hooks may refuse it (it is then cancelled, with their reason).
      return pipelines.created(created);
    },
    tasks: () => board.tasks.list(),
    readTask: (id) => board.tasks.get(id),
    team: () => board.registry.read(),
    spawn: (name, role, prompt) => session.spawn(name, role, prompt),
    // One of this session's threads, else a live member of another process (asked through its inbox).
    requestShutdown: async (name) => (await session.requestShutdown(name)) ?? session.requestShutdownElsewhere(name),
    decidePlan: (requestId, approve, feedback) => session.decidePlan(requestId, approve, feedback),
    takeUnread: () => session.takeUnread(),
  };
}

/** What a lead agent over a session works with (see LeadAgentHost); the live values are read when used. */
export function leadAgentHost(parts: {
  board: Board;
  pipelines: Pipeline;
  session: SessionCommands;
  rootDir: string;
  repositoryTop: () => string | null;
  settings: Partial<TeammateSettings>;
  hands: readonly LeadHand[];
  model: () => ModelClient;
  trace: Trace;
  maxRequestTokens: number;
}): LeadAgentHost {
  const { board, pipelines, session } = parts;
  return {
    lead: () => session.lead,
    rootDir: parts.rootDir,
    repositoryTop: parts.repositoryTop,
    settings: parts.settings,
    board,
    hands: parts.hands,
    services: leadServices(board, pipelines, session),
    model: parts.model,
    trace: parts.trace,
    sink: board.sink,
    maxRequestTokens: parts.maxRequestTokens,
  };
}
