import { z } from 'zod';
import { HOOK_EVENTS, type HookEventName } from '../events/schema.js';

/**
 * The `hooks` key of autoteam.config.json, in the shape of Claude Code's settings:
 * `{"<Event>": [{"matcher": "<name or regex>", "hooks": [{"type": "command", "command": "…", "timeout": 30}]}]}`.
 * Every mistake is an issue at its key path (`PreToolUse.0.matcher`), which the project config
 * prefixes with `hooks.` and the file name.
 */

/** Seconds a hook may run when its entry does not say. */
export const DEFAULT_HOOK_TIMEOUT_S = 60;
/** A day: past it a timer no longer fits in setTimeout, and no hook should hold a team that long. */
const MAX_HOOK_TIMEOUT_S = 86_400;

/**
 * A matcher that is only names (letters, digits, `_`, `-`, joined by `|`) matches exactly one of
 * them, so `Bash` does not match `BashOutput` and `implementation` not `reimplementation`; anything
 * else is a regular expression searched in the name (`^run_`, `.*_file`), as Claude Code does.
 */
const PLAIN_NAMES = /^[A-Za-z0-9_-]+(\|[A-Za-z0-9_-]+)*$/;

/** Whether `matcher` is names matched exactly (not a regular expression). */
export function isPlainMatcher(matcher: string): boolean {
  return PLAIN_NAMES.test(matcher);
}

export function compileMatcher(matcher: string | undefined): (target: string) => boolean {
  if (matcher === undefined || matcher === '' || matcher === '*') return () => true;
  if (isPlainMatcher(matcher)) {
    const names = new Set(matcher.split('|'));
    return (target) => names.has(target);
  }
  const pattern = new RegExp(matcher);
  return (target) => pattern.test(target);
}

const HookCommandSchema = z
  .object({
    type: z.literal('command', { error: 'only "command" hooks are supported (a shell command run with /bin/sh -c)' }),
    command: z.string().min(1, { error: 'the shell command to run (not empty)' }),
    timeout: z
      .number({ error: 'seconds, a number' })
      .positive({ error: 'seconds, more than 0' })
      .max(MAX_HOOK_TIMEOUT_S, { error: `seconds, at most ${MAX_HOOK_TIMEOUT_S}` })
      .optional(),
  })
  .strict();

const MatcherGroupSchema = z
  .object({
    matcher: z
      .string()
      .optional()
      .superRefine((matcher, ctx) => {
        try {
          compileMatcher(matcher);
        } catch (error) {
          ctx.addIssue({ code: 'custom', message: `not a valid regular expression (${(error as Error).message})` });
        }
      }),
    hooks: z.array(HookCommandSchema),
  })
  .strict();

export type HookCommand = z.infer<typeof HookCommandSchema>;
export type HookMatcherGroup = z.infer<typeof MatcherGroupSchema>;
export type HooksConfig = Partial<Record<HookEventName, HookMatcherGroup[]>>;

const KNOWN = new Set<string>(HOOK_EVENTS);

export const HooksConfigSchema = z
  .record(z.string(), z.array(MatcherGroupSchema))
  .superRefine((value, ctx) => {
    for (const name of Object.keys(value)) {
      if (!KNOWN.has(name)) ctx.addIssue({ code: 'custom', path: [name], message: `unknown hook event '${name}' (events: ${HOOK_EVENTS.join(', ')})` });
    }
  })
  .transform((value) => value as HooksConfig);
