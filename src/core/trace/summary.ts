import type { TraceRecord } from './trace.js';

export interface RoleSummary {
  role: string;
  agents: string[];
  modelCalls: number;
  toolCalls: number;
  /** Tool name → how many calls: the role's behaviour distribution. */
  tools: Record<string, number>;
  inputTokens: number;
  outputTokens: number;
}

export interface TraceSummary {
  roles: RoleSummary[];
  modelCalls: number;
  toolCalls: number;
  toolErrors: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
}

/** Folds trace records (optionally only those after `since`) into per-role behaviour and tokens. */
export function summarizeTrace(records: readonly TraceRecord[], filter: (r: TraceRecord) => boolean = () => true): TraceSummary {
  const roles = new Map<string, RoleSummary>();
  const summary: TraceSummary = { roles: [], modelCalls: 0, toolCalls: 0, toolErrors: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0 };
  const roleOf = (role: string, agent: string): RoleSummary => {
    let entry = roles.get(role);
    if (!entry) {
      entry = { role, agents: [], modelCalls: 0, toolCalls: 0, tools: {}, inputTokens: 0, outputTokens: 0 };
      roles.set(role, entry);
    }
    if (!entry.agents.includes(agent)) entry.agents.push(agent);
    return entry;
  };
  for (const record of records) {
    if (!filter(record)) continue;
    if (record.kind === 'model_call') {
      const entry = roleOf(record.role, record.agent);
      entry.modelCalls++;
      entry.inputTokens += record.inputTokens;
      entry.outputTokens += record.outputTokens;
      summary.modelCalls++;
      summary.inputTokens += record.inputTokens;
      summary.outputTokens += record.outputTokens;
      summary.cacheReadTokens += record.cacheReadTokens;
    } else if (record.kind === 'tool_call') {
      const entry = roleOf(record.role, record.agent);
      entry.toolCalls++;
      entry.tools[record.tool] = (entry.tools[record.tool] ?? 0) + 1;
      summary.toolCalls++;
      if (!record.ok) summary.toolErrors++;
    }
  }
  summary.roles = [...roles.values()].sort((a, b) => a.role.localeCompare(b.role));
  return summary;
}
