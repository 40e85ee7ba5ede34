import type { BuiltinStage, Stage } from '../board/schemas.js';
import { ConfigError } from '../errors.js';

/** Where a signal tool sends the pipeline next. */
export type StageNext = Stage | 'approved';

export interface Transition {
  next: StageNext;
  /** Sends the work back: the next task is the same stage again at revision + 1 (bounded by max_revisions). */
  revise?: boolean;
  /** Artifacts of the finished task the next task carries, besides the requirement, requirements, Q&A and criteria. */
  carry?: readonly string[];
}

export interface StageDefinition {
  stage: Stage;
  role: string;
  title: string;
  systemPrompt: string;
  /** Stage tools offered to the agent (coordination tools are added by the registry). */
  tools: readonly string[];
  /** Signal tool → the next stage. A signal ends the task; the runtime posts the next one. */
  transitions: Readonly<Record<string, Transition>>;
  /** The subject of a task of this stage. */
  subject(requirement: string, revision: number, file?: string): string;
}

/** A subject is one line: a pasted requirement's line breaks become spaces. */
const short = (text: string, max = 60) => {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
};

export const COORDINATION_TOOL_NAMES = ['send_message', 'read_inbox', 'idle', 'shutdown_response'] as const;

export const STAGE_DEFINITIONS: Readonly<Record<BuiltinStage, StageDefinition>> = {
  requirements: {
    stage: 'requirements',
    role: 'analyst',
    title: 'Requirements analysis',
    systemPrompt: [
      'You are the requirements analyst of a small software team. You receive a requirement from a person.',
      'Turn it into a short list of concrete, testable requirements for the engineer.',
      '- Ask a clarifying question (ask_clarifying_question) only for what you cannot reasonably assume; at most a few, one at a time.',
      '- Record each requirement with save_requirement(key, value): language, inputs, outputs, behaviour, edge cases.',
      '- Record what "done" means with add_acceptance_criterion(criterion, verify): one observable behaviour each, and how a',
      '  reviewer can check it by running the program. Every answer the person gave that changes the program becomes a criterion.',
      '  The reviewer can only approve when every criterion is shown to be met.',
      '- Finish with complete_requirements_analysis(summary). You do not write code. If the request cannot be done, fail_task(reason).',
    ].join('\n'),
    tools: ['ask_clarifying_question', 'save_requirement', 'add_acceptance_criterion', 'complete_requirements_analysis', 'fail_task'],
    transitions: { complete_requirements_analysis: { next: 'implementation' } },
    subject: (requirement) => `Analyse: ${short(requirement)}`,
  },
  implementation: {
    stage: 'implementation',
    role: 'engineer',
    title: 'Implementation',
    systemPrompt: [
      'You are the engineer of a small software team. You implement the requirements handed to you.',
      '- Write the program into your workspace with write_file (relative paths only); keep it small, readable and lint-clean:',
      '  a module docstring (Python) or a leading comment (JS/TS), lines up to 120 characters, no tabs or trailing whitespace, no bare except.',
      '- Run it for real (execute_code, or bash in the workspace) on a safe scratch directory, never on real user data.',
      '- Add tests (test_*.py or *.test.js/.mjs) for the acceptance criteria; the reviewer runs them.',
      '- When it works, call submit_for_review(file) with the main file. If this is a revision, fix every blocker and major',
      '  issue listed first; an unchanged resubmission is refused.',
      '- If the requirement cannot be implemented, fail_task(reason) says so honestly; never submit a stub.',
    ].join('\n'),
    tools: ['write_file', 'read_file', 'edit_file', 'execute_code', 'bash', 'submit_for_review', 'fail_task'],
    transitions: { submit_for_review: { next: 'review', carry: ['submitted'] } },
    subject: (requirement, revision) => (revision > 0 ? `Revise (${revision}): ${short(requirement)}` : `Implement: ${short(requirement)}`),
  },
  review: {
    stage: 'review',
    role: 'reviewer',
    title: 'Code review',
    systemPrompt: [
      'You are the code reviewer of a small software team. You review the file submitted by the engineer.',
      '- Run run_linter and run_tests on it (both required before approval), analyze_complexity, and read it with read_file.',
      '- For each acceptance criterion, write a short check with run_check(code): a script that runs or imports the submitted',
      '  program on its own scratch data and exits non-zero when the criterion is not met. Its result is evidence CHK1, CHK2, ….',
      '- approve_code(comment, criteria) only when every criterion is met: give {id, met: true, evidence} for each, citing',
      '  the check or test that shows it. The runtime refuses an approval without that evidence.',
      '- Otherwise request_revision(issues) with {text, severity: blocker|major|minor, criterion?} per issue. Minor issues',
      '  alone are no reason to send work back: approve with notes instead. On a re-review, check the previous issues first.',
      '- Judge from the tools\' real output; do not invent problems.',
    ].join('\n'),
    tools: ['run_linter', 'run_tests', 'analyze_complexity', 'run_check', 'read_file', 'request_revision', 'approve_code', 'fail_task'],
    transitions: {
      request_revision: { next: 'implementation', revise: true, carry: ['issues', 'submitted'] },
      approve_code: { next: 'approved' },
    },
    subject: (_requirement, revision, file) => `Review ${file ?? 'submission'} (revision ${revision})`,
  },
};

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
}

/** The stages of this process: the built-in ones, changed and added to by `configureStages`. */
let configured: Record<string, StageDefinition> = { ...STAGE_DEFINITIONS };

/**
 * Applies a configuration's stages (every thread applies the same one at start). A new stage's
 * subject is its title and the requirement.
 */
export function configureStages(specs: Readonly<Record<string, StageSpec>> = {}): void {
  const next: Record<string, StageDefinition> = { ...STAGE_DEFINITIONS };
  for (const [name, spec] of Object.entries(specs)) {
    const base = next[name];
    const title = spec.title ?? base?.title ?? name.charAt(0).toUpperCase() + name.slice(1);
    next[name] = {
      stage: name,
      role: spec.role ?? base?.role ?? name,
      title,
      systemPrompt: spec.prompt ?? base?.systemPrompt ?? '',
      tools: spec.tools ?? base?.tools ?? [],
      transitions: spec.signals ? { ...(base?.transitions ?? {}), ...spec.signals } : (base?.transitions ?? {}),
      subject: base?.subject ?? ((requirement, revision) => `${title}${revision ? ` (${revision})` : ''}: ${short(requirement)}`),
    };
  }
  configured = next;
}

/** Every stage of this process, built-in ones first. */
export function allStages(): StageDefinition[] {
  return Object.values(configured);
}

/** The roles a teammate may have: each stage's, and `any` (general tasks with no role). */
export function roles(): string[] {
  return [...new Set(Object.values(configured).map((stage) => stage.role)), 'any'];
}

/** Refuses a role no stage or task can use, naming the ones that exist. */
export function checkRole(role: string): void {
  const known = roles();
  if (!known.includes(role)) throw new ConfigError(`unknown role '${role}' (roles: ${known.join(', ')})`);
}

export function stageOf(stage: Stage): StageDefinition {
  const definition = configured[stage];
  if (!definition) throw new ConfigError(`unknown stage '${stage}' (stages: ${Object.keys(configured).join(', ')}): every host of a board needs the same autoteam.config.json`);
  return definition;
}

/** The role that works a stage, e.g. requirements → analyst. */
export function roleForStage(stage: Stage): string {
  return stageOf(stage).role;
}

export const GENERAL_SYSTEM_PROMPT = [
  'You are a member of a small autonomous team that shares a task board.',
  'Work on the task you have claimed with your tools (files and commands run in your workspace), then call',
  'complete_task(result) with a one-line result, or fail_task(reason) if it cannot be done.',
  'Use send_message to talk to teammates or the lead.',
  'If the task asks for a plan first, submit it with plan_approval and wait for approval before doing the work.',
].join('\n');
