import { z } from 'zod';
import { ArtifactsSchema } from './artifacts.js';

export const TASK_STATUSES = ['pending', 'in_progress', 'completed', 'failed', 'cancelled'] as const;
export const STAGE_NAME = /^[a-z][a-z0-9_-]{0,31}$/;
export const MEMBER_STATUSES = ['working', 'idle', 'waiting', 'shutdown', 'dead'] as const;
export const MESSAGE_TYPES = [
  'message',
  'broadcast',
  'shutdown_request',
  'shutdown_response',
  'plan_approval_request',
  'plan_approval_response',
  'question',
  'answer',
  'idle_notification',
  'pipeline_update',
] as const;

const isoDate = z.string().min(1);

export const LeaseSchema = z.object({
  owner: z.string().min(1),
  token: z.number().int().positive(),
  until: z.iso.datetime({ message: 'expected an ISO date-time such as 2026-01-01T00:00:00.000Z' }),
});

export const HistoryEntrySchema = z.object({
  at: isoDate,
  by: z.string(),
  event: z.string().min(1),
  detail: z.string().optional(),
});

export const UsageSchema = z.object({
  calls: z.number().int().nonnegative(),
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
});
export type TaskUsage = z.infer<typeof UsageSchema>;

export const TaskSchema = z.object({
  id: z.number().int().positive(),
  subject: z.string().min(1),
  description: z.string().default(''),
  status: z.enum(TASK_STATUSES),
  owner: z.string().nullable().default(null),
  role: z.string().nullable().default(null),
  /** A built-in stage, or one defined in autoteam.config.json. */
  stage: z.string().regex(STAGE_NAME, 'a stage name: lower-case letters, digits, - and _').nullable().default(null),
  blockedBy: z.array(z.number().int().positive()).default([]),
  blocks: z.array(z.number().int().positive()).default([]),
  pipeline: z.number().int().positive().nullable().default(null),
  revision: z.number().int().nonnegative().default(0),
  /** How many times the task has been claimed; the current claim's fencing token equals it. */
  claims: z.number().int().nonnegative().default(0),
  lease: LeaseSchema.nullable().default(null),
  /** Failed attempts (a model or runtime error ended the work); past MAX_ATTEMPTS the task fails. */
  attempts: z.number().int().nonnegative().default(0),
  /** Not claimable by anyone before this time (the backoff after a failed attempt). */
  notBefore: z.iso.datetime().nullable().default(null),
  handoff: z.string().default(''),
  artifacts: ArtifactsSchema.default({}),
  /** Model calls and tokens spent on this task (the pipeline's budgets sum them). */
  usage: UsageSchema.default({ calls: 0, inputTokens: 0, outputTokens: 0 }),
  result: z.string().nullable().default(null),
  history: z.array(HistoryEntrySchema).default([]),
  createdAt: isoDate,
  updatedAt: isoDate,
});

export type Task = z.infer<typeof TaskSchema>;
export type TaskStatus = (typeof TASK_STATUSES)[number];
/** A stage's name (the stages themselves are the stage layer's: stages/stage-registry.ts). */
export type Stage = string;
export type Lease = z.infer<typeof LeaseSchema>;
export type HistoryEntry = z.infer<typeof HistoryEntrySchema>;

export const MessageSchema = z
  .object({
    id: z.string().min(1),
    type: z.enum(MESSAGE_TYPES),
    from: z.string().min(1),
    to: z.string().min(1),
    content: z.string(),
    at: isoDate,
  })
  .catchall(z.unknown());

export type Message = z.infer<typeof MessageSchema>;
export type MessageType = (typeof MESSAGE_TYPES)[number];

export const MemberSchema = z.object({
  name: z.string().min(1, 'empty: a name is needed').max(64, 'at most 64 characters').regex(/^[A-Za-z0-9_-]*$/, 'letters, digits, _ and - only'),
  role: z.string().min(1),
  status: z.enum(MEMBER_STATUSES),
  task: z.number().int().positive().nullable().default(null),
  since: isoDate,
  pid: z.number().int().nullable().default(null),
  /** The host the member's process runs on, and its last sign of life. */
  host: z.string().optional(),
  heartbeat: isoDate.optional(),
  reason: z.string().optional(),
});

export type Member = z.infer<typeof MemberSchema>;
export type MemberStatus = (typeof MEMBER_STATUSES)[number];
/**
 * A member's state as a lead shows it: a registry status, or `starting` for a teammate the lead started
 * whose thread has not joined the registry yet. `starting` is never written to the board.
 */
export type MemberState = MemberStatus | 'starting';

/** The lesson's team file (`team_name`, members without times or pids) reads as this one. */
function fromLessonConfig(raw: unknown): unknown {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return raw;
  const config = { ...(raw as Record<string, unknown>) };
  if (typeof config.team_name === 'string') {
    config.team ??= config.team_name;
    delete config.team_name;
  }
  if (Array.isArray(config.members)) {
    config.members = config.members.map((member: unknown) =>
      member && typeof member === 'object' ? { since: '1970-01-01T00:00:00.000Z', status: 'idle', ...(member as object) } : member,
    );
  }
  return config;
}

export const TeamConfigSchema = z.preprocess(
  fromLessonConfig,
  z.object({
    team: z.string().min(1),
    // Only there when it is not a string (see fromLessonConfig): then its error names it.
    team_name: z.string().optional(),
    lead: z.string().min(1).default('lead'),
    members: z.array(MemberSchema).default([]),
  }),
);

export type TeamConfig = z.infer<typeof TeamConfigSchema>;

/** Zod's words for a field left out or of the wrong type (`Invalid input: expected string, received undefined`) as a person says them. */
function plainZodMessage(message: string): string {
  // zod's bounds (`Too small: expected number to be >=1`, `… string to have >=1 characters`) in words.
  const bound = /^Too (?:small|big): expected (\w+) to (?:be|have) (>=|>|<=|<)(\S+)(?: (\w+))?$/.exec(message);
  if (bound) {
    const [, kind, op, limit, unit] = bound as unknown as [string, string, string, string, string | undefined];
    const words = { '>=': 'at least', '>': 'more than', '<=': 'at most', '<': 'less than' }[op];
    return `${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind} of ${words} ${limit}${unit ? ` ${unit}` : ''} is expected`;
  }
  const wrong = /^Invalid input: expected (\w+), received (\w+)$/.exec(message);
  if (!wrong) return message;
  // zod's `int` (1.5 is a number, but not a whole one) in a person's words.
  const a = (word: string) => (word === 'int' ? 'a whole number' : `${/^[aeiou]/.test(word) ? 'an' : 'a'} ${word}`);
  const [, expected, received] = wrong as unknown as [string, string, string];
  if (expected === 'int' && received === 'number') return 'a whole number is expected';
  return received === 'undefined' ? `missing (${a(expected)} is expected)` : `${a(expected)} is expected, not ${received === 'null' ? 'null' : a(received)}`;
}

/**
 * Formats a zod error as `field.path: message; …` so the reader sees which field is wrong; `hint`
 * adds to an issue's own text (a "did you mean"). `prefix` goes before every path (`hooks.…`), `root`
 * names an issue of the whole value, and at most `max` issues are said.
 */
export function describeZodError(
  error: z.ZodError,
  hint: (issue: z.core.$ZodIssue) => string = () => '',
  { prefix = [], root = '(root)', max = 5 }: { prefix?: readonly PropertyKey[]; root?: string; max?: number } = {},
): string {
  return error.issues
    .slice(0, max)
    .map((issue) => {
      const at = [...prefix, ...issue.path].map(String).join('.');
      return `${at || root}: ${plainZodMessage(issue.message)}${hint(issue)}`;
    })
    .join('; ');
}
