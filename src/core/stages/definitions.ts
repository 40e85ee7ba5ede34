import { implementationStage } from './builtin/implementation/index.js';
import { requirementsStage } from './builtin/requirements/index.js';
import { reviewStage } from './builtin/review/index.js';

/**
 * The built-in stages by name, for reading (each is defined in its folder under stages/builtin/).
 * The stages a team works are a StageRegistry (stage-registry.ts), built from these and the config.
 */
export const STAGE_DEFINITIONS = { requirements: requirementsStage, implementation: implementationStage, review: reviewStage } as const;

export type { StageDefinition, StageNext, Transition } from './stage.js';
export { COORDINATION_TOOL_NAMES, GENERAL_SYSTEM_PROMPT } from './stage.js';
export type { StageSpec } from './configured-stage.js';
