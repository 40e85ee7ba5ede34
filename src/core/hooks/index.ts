export { compileMatcher, DEFAULT_HOOK_TIMEOUT_S, type HookCommand, type HookMatcherGroup, type HooksConfig, HooksConfigSchema } from './config.js';
export type { HookContext, HookPayloads } from './payload.js';
export { DEFAULT_HOOK_OUTPUT_BYTES, type HookDecision, type HookResult, HookRunner, type HookRunnerOptions } from './runner.js';
