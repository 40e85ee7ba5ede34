import type { Stage } from '../board/schemas.js';

/** Where a signal tool sends the pipeline next. */
export type StageNext = Stage | 'approved';

export interface StageDefinition {
  stage: Stage;
  role: string;
  title: string;
  systemPrompt: string;
  /** Stage tools offered to the agent (coordination tools are added by the registry). */
  tools: readonly string[];
  /** Signal tool → the next stage. A signal ends the task; the runtime posts the next one. */
  transitions: Readonly<Record<string, StageNext>>;
}

export const COORDINATION_TOOL_NAMES = ['send_message', 'read_inbox', 'idle', 'shutdown_response'] as const;

export const STAGE_DEFINITIONS: Readonly<Record<Stage, StageDefinition>> = {
  requirements: {
    stage: 'requirements',
    role: 'analyst',
    title: 'Requirements analysis',
    systemPrompt: [
      'You are the requirements analyst of a small software team. You receive a requirement from a person.',
      'Turn it into a short list of concrete, testable requirements for the engineer.',
      '- Ask a clarifying question (ask_clarifying_question) only for what you cannot reasonably assume; at most a few, one at a time.',
      '- Record each requirement with save_requirement(key, value): language, inputs, outputs, behaviour, edge cases.',
      '- Finish with complete_requirements_analysis(summary). You do not write code.',
    ].join('\n'),
    tools: ['ask_clarifying_question', 'save_requirement', 'complete_requirements_analysis'],
    transitions: { complete_requirements_analysis: 'implementation' },
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
      '- Optionally add tests (test_*.py or *.test.js) that the reviewer will run.',
      '- When it works, call submit_for_review(file) with the main file. If this is a revision, fix every issue listed first.',
    ].join('\n'),
    tools: ['write_file', 'read_file', 'edit_file', 'execute_code', 'bash', 'submit_for_review'],
    transitions: { submit_for_review: 'review' },
  },
  review: {
    stage: 'review',
    role: 'reviewer',
    title: 'Code review',
    systemPrompt: [
      'You are the code reviewer of a small software team. You review the file submitted by the engineer.',
      '- Run run_linter, run_tests and analyze_complexity on it, and read it with read_file.',
      '- If the linter reports problems, tests fail, or a requirement is not met: request_revision(issues) with one concrete issue per item.',
      '- Otherwise approve_code(comment). Judge from the tools\' real output; do not invent problems.',
    ].join('\n'),
    tools: ['run_linter', 'run_tests', 'analyze_complexity', 'read_file', 'request_revision', 'approve_code'],
    transitions: { request_revision: 'implementation', approve_code: 'approved' },
  },
};

export function stageOf(stage: Stage): StageDefinition {
  return STAGE_DEFINITIONS[stage];
}

/** The role that works a stage, e.g. requirements → analyst. */
export function roleForStage(stage: Stage): string {
  return STAGE_DEFINITIONS[stage].role;
}

export const GENERAL_SYSTEM_PROMPT = [
  'You are a member of a small autonomous team that shares a task board.',
  'Work on the task you have claimed with your tools (files and commands run in your workspace), then call',
  'complete_task(result) with a one-line result, or fail_task(reason) if it cannot be done.',
  'Use send_message to talk to teammates or the lead.',
  'If the task asks for a plan first, submit it with plan_approval and wait for approval before doing the work.',
].join('\n');
