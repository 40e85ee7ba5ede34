import { carriedSection, type HandoffData, requirementsSection } from './handoff-data.js';
import { type StageDefinition, short, type Transition } from './stage.js';

/**
 * A stage as autoteam.config.json gives it (plain data, so it crosses to worker threads): for a
 * built-in stage, what to change; for a new one, everything.
 */
export interface StageSpec {
  role?: string;
  title?: string;
  prompt?: string;
  tools?: string[];
  /** Signal tool → where it sends the pipeline (a stage, or `approved`). */
  signals?: Record<string, Transition>;
  /** Artifact keys a retried task of this stage keeps, besides the runtime's and the pipeline's. */
  retry?: { keep: string[] };
}

/** What a retried task of a stage with no rule of its own keeps: what was submitted before it. */
const GENERIC_KEEP = ['submitted', 'files'] as const;

/** The handoff of a stage with no rendering of its own: what came before, and how to end it. */
function genericHandoff(signals: readonly string[]): (data: HandoffData) => string {
  return (data) => {
    const lines = [...requirementsSection(data), ...carriedSection(data)];
    lines.push('', `Do this stage's work as your instructions say, then end it with ${signals.join(' or ')}${signals.includes('complete_stage') ? '(report)' : ''}.`);
    return lines.join('\n');
  };
}

/**
 * A stage from plain data: a new one (`base` absent) gets the generic subject, handoff and retry;
 * a built-in one keeps its own hooks and takes the spec's role, title, prompt, tools and signals.
 */
export function defineStage(name: string, spec: StageSpec, base?: StageDefinition): StageDefinition {
  const title = spec.title ?? base?.title ?? name.charAt(0).toUpperCase() + name.slice(1);
  const transitions = spec.signals ? { ...(base?.transitions ?? {}), ...spec.signals } : (base?.transitions ?? {});
  return {
    ...base,
    stage: name,
    role: spec.role ?? base?.role ?? name,
    title,
    systemPrompt: spec.prompt ?? base?.systemPrompt ?? '',
    tools: spec.tools ?? base?.tools ?? [],
    transitions,
    subject: base?.subject ?? ((requirement, revision) => `${title}${revision ? ` (${revision})` : ''}: ${short(requirement)}`),
    handoff: base?.handoff ?? genericHandoff(Object.keys(transitions)),
    retry: spec.retry ?? base?.retry ?? { keep: GENERIC_KEEP },
  };
}
