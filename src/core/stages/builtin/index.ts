import type { StageDefinition } from '../stage.js';
import { implementationStage } from './implementation/index.js';
import { requirementsStage } from './requirements/index.js';
import { reviewStage } from './review/index.js';

/** The built-in stages, in pipeline order: the first is where a posted requirement starts. */
export const BUILTIN_STAGES: readonly StageDefinition[] = [requirementsStage, implementationStage, reviewStage];
