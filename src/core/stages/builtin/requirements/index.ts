import { type StageDefinition, short } from '../../stage.js';
import { RequirementsArtifactsSchema } from './artifacts.js';

/** The analyst turns a person's requirement into requirements and acceptance criteria. */
export const requirementsStage: StageDefinition = {
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
  artifacts: RequirementsArtifactsSchema,
  subject: (requirement) => `Analyse: ${short(requirement)}`,
  // The requirement is the task's description; the analyst starts from nothing else.
  handoff: () => '',
  // The analyst writes the criteria: a pipeline that starts here starts with none.
  start: () => ({}),
  // What the analyst saved (requirements, Q&A, criteria) is the pipeline's data, kept anyway.
  retry: { keep: ['questionsRefused'] },
};
