import { z } from 'zod';
import type { HookEventName } from '../events/schema.js';

/**
 * The parts of Claude Code's JSON answer (stdout, exit 0) that map onto block: for PreToolUse
 * `hookSpecificOutput.permissionDecision: "deny"` with `permissionDecisionReason` (and the older
 * top-level `decision: "block"`), for PostToolUse `decision: "block"` with `reason`. Claude Code
 * documents no JSON decision for its team events; what it offers there (`continue: false` to stop
 * the teammate altogether) is not a block, so those events, like PipelineCompleted, read only the
 * exit code. Other fields (`additionalContext`, `updatedInput`, `suppressOutput`, "ask") are not
 * read: stdout that is not such an answer is plain output.
 */
const JsonAnswerSchema = z
  .object({
    decision: z.string().optional(),
    reason: z.string().optional(),
    hookSpecificOutput: z.object({ permissionDecision: z.string().optional(), permissionDecisionReason: z.string().optional() }).loose().optional(),
  })
  .loose();

/** A block the hook asked for in JSON (with its reason, if it gave one), or null. */
export function jsonBlock(event: HookEventName, stdout: string): { reason?: string } | null {
  if (event !== 'PreToolUse' && event !== 'PostToolUse') return null;
  const text = stdout.trim();
  if (!text.startsWith('{')) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  const answer = JsonAnswerSchema.safeParse(value);
  if (!answer.success) return null;
  const { decision, reason, hookSpecificOutput: specific } = answer.data;
  if (event === 'PreToolUse' && specific?.permissionDecision === 'deny') {
    const why = specific.permissionDecisionReason ?? reason;
    return why ? { reason: why } : {};
  }
  if (decision === 'block') return reason ? { reason } : {};
  return null;
}
