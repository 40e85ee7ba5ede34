import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { STAGE_NAME, describeZodError } from '../board/schemas.js';
import { closestWord, unknownRole } from '../words.js';
import { ConfigError, describeJsonError } from '../errors.js';
import { type ModelOverrides, PROVIDERS, resolveModelSpec } from '../model/config.js';
import type { ModelSpec } from '../model/factory.js';
import type { Price } from '../model/pricing.js';
import { ArtifactsSchema } from '../board/artifacts.js';
import { BUILTIN_STAGES } from '../stages/builtin/index.js';
import type { StageSpec } from '../stages/configured-stage.js';
import type { StageDefinition } from '../stages/stage.js';

/** The artifact keys a signal may carry to the next stage. */
const ARTIFACT_KEYS = new Set(Object.keys(ArtifactsSchema.shape));
import { TEAMMATE_TOOLS } from '../tools/registry.js';
import { type HooksConfig, HooksConfigSchema } from '../hooks/config.js';
import { hookMatcherWarnings } from './hook-warnings.js';
import { checkMcpServers, type McpServerEntry, McpServersSchema, type McpServerSpec } from '../mcp/config.js';
import { serverVariables } from '../mcp/expand.js';
import { type AgentsMdSettings, DEFAULT_AGENTS_MD_BYTES } from '../agent/repository-instructions.js';
import { absoluteRemote } from '../git/remote-url.js';
import { CONFIG_FILE } from './trusted-files.js';

export { CONFIG_FILE } from './trusted-files.js';

const count = (min: number) => z.number().int().min(min);

/** More than this many teammates of one role is a typo, not a team (each is a thread and a model budget). */
export const MAX_PER_ROLE = 32;
/** What a member's `count` must be, said for a string, a fraction and a negative alike. */
const A_COUNT = `a whole number of teammates, 0 to ${MAX_PER_ROLE}`;

/** A member as the config names it; `count` copies of it join (0: none). */
export interface TeamEntry {
  name: string;
  role: string;
  prompt?: string;
  count?: number;
}

/** The lead's file and shell tools, as `lead.tools` names them. */
export const LEAD_HANDS = ['bash', 'read_file', 'write_file', 'edit_file'] as const;
export type LeadHand = (typeof LEAD_HANDS)[number];

const ModelChoiceSchema = z.object({ provider: z.enum(PROVIDERS).optional(), model: z.string().min(1).optional() }).strict();
const TransitionSchema = z.object({ next: z.string().min(1), revise: z.boolean().optional(), carry: z.array(z.string().min(1)).optional() }).strict();
const StageSchema = z
  .object({
    role: z.string().regex(/^[a-z][a-z0-9_-]{0,31}$/, 'a role name: lower-case letters, digits, - and _').optional(),
    title: z.string().min(1).optional(),
    prompt: z.string().min(1).optional(),
    promptFile: z.string().min(1).optional(),
    tools: z.array(z.string().min(1)).min(1).optional(),
    /** Signal tool → the next stage (or `approved`). */
    signals: z.record(z.string(), TransitionSchema).optional(),
    /** Artifact keys a retried task of the stage keeps (the runtime's and the pipeline's are always kept). */
    retry: z.object({ keep: z.array(z.string().min(1)) }).strict().optional(),
  })
  .strict();

export const ProjectConfigSchema = z
  .object({
    $schema: z.string().optional(),
    team: z
      .array(
        z
          .object({
            name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ and -, at most 64'),
            role: z.string().min(1),
            prompt: z.string().min(1).optional(),
            /** How many teammates like this one (engineer, engineer-2, …); 0 leaves it out. */
            count: z.number({ error: A_COUNT }).int(A_COUNT).min(0, A_COUNT).max(MAX_PER_ROLE, `at most ${MAX_PER_ROLE} teammates of one role`).optional(),
          })
          .strict(),
      )
      .min(1)
      // The flags' bound, over all the members of a role: two members of 20 engineers are 40.
      .superRefine((team, ctx) => {
        const started = new Map<string, number>();
        team.forEach((member, i) => {
          const count = (started.get(member.role) ?? 0) + (member.count ?? 1);
          started.set(member.role, count);
          // One member past the bound is that member's count's own error.
          if (count > MAX_PER_ROLE && count - (member.count ?? 1) <= MAX_PER_ROLE && (member.count ?? 1) <= MAX_PER_ROLE) ctx.addIssue({ code: 'custom', path: [i, 'count'], message: `at most ${MAX_PER_ROLE} teammates of one role: the members of role ${member.role} up to this one start ${count}` });
        });
      })
      .optional(),
    /** `default`, and any role: `{provider?, model?}`. */
    models: z.record(z.string(), ModelChoiceSchema).optional(),
    /** The built-in stages to change, and new ones (by name). */
    stages: z.record(z.string().regex(STAGE_NAME, 'a stage name: lower-case letters, digits, - and _'), StageSchema).optional(),
    limits: z
      .object({ maxRevisions: count(0), maxTurns: count(1), maxQuestions: count(0), maxPipelineSteps: count(1), tokenBudgetPipeline: count(1), maxRequestTokens: count(1000), maxInboxMb: count(1) })
      .partial()
      .strict()
      .optional(),
    /** The lead agent's own hands: which of its file and shell tools it gets (default all; [] for none). */
    lead: z.object({ tools: z.array(z.enum(LEAD_HANDS)) }).partial().strict().optional(),
    /** Dollars per million tokens, by model id prefix; added to (and over) the built-in table. */
    prices: z.record(z.string(), z.object({ input: z.number().min(0), output: z.number().min(0), cacheRead: z.number().min(0).default(0) }).strict()).optional(),
    /** The person's commands at the team's boundaries, in Claude Code's shape (hooks/config.ts). */
    hooks: HooksConfigSchema.optional(),
    /** The repository's AGENTS.md files in the teammates' instructions (repository mode): on by default, 32 KB a task. */
    agentsMd: z.object({ enabled: z.boolean(), maxBytes: count(1024) }).partial().strict().optional(),
    /** MCP servers whose tools teammates use, in the shape of Claude Code's .mcp.json, plus roles (mcp/config.ts). */
    mcpServers: McpServersSchema.optional(),
    /** The lead runs the merge queue whenever a pipeline is approved (lead/merge-queue.ts). */
    autoMerge: z.boolean().optional(),
    /** Pipelines' branches on a remote repository (any git URL), so folders on several machines work one repository. */
    repository: z.object({ remote: z.string().min(1, 'a git URL or path'), base: z.string().min(1).optional() }).strict().optional(),
  })
  .strict();

export type ProjectConfigFile = z.infer<typeof ProjectConfigSchema>;


export interface ProjectConfig {
  file: string | null;
  /** The members as configured; `count` copies of each (team-size.ts names them). */
  team?: TeamEntry[];
  /** role → the model choice for it; `default` for every role not named. */
  models: Record<string, ModelOverrides>;
  /** Changes to the built-in stages and new stages, for `StageRegistry.from` in every thread. */
  stages: Record<string, StageSpec>;
  /** The limits as the environment variables they default (the environment and flags still win). */
  limitsEnv: Record<string, string>;
  /** Dollars per million tokens, by model id prefix. */
  prices: Record<string, Price>;
  /** The lead's file and shell tools (`lead.tools`); absent: all of them. */
  leadTools?: readonly LeadHand[];
  /** The person's hooks by event (`hooks`); absent: none. For `new HookRunner(hooks, …)`. */
  hooks?: HooksConfig;
  /** `agentsMd`: the repository's instructions turned off, or held to another size; absent: the defaults. */
  agentsMd?: { enabled?: boolean; maxBytes?: number };
  /** MCP servers by name (`mcpServers`); absent: none. Plain JSON for every thread's settings. */
  mcpServers?: Record<string, McpServerSpec>;
  /** `autoMerge`: the lead merges each pipeline through the merge queue as it is approved. */
  autoMerge?: boolean;
  /** `repository`: the remote pipelines' branches live on (the full URL: never shown or stored as is). */
  repository?: { remote: string; base?: string };
  /** What is allowed but probably not meant (a stage nobody on the team works), to say at start. */
  warnings: string[];
  /** Which of `warnings` say a role has no one on `team`: not said when the team started has one (`--engineers 1`). */
  unstaffed?: Array<{ role: string; warning: string }>;
}

const LIMIT_ENV = { maxRevisions: 'MAX_REVISIONS', maxTurns: 'MAX_TURNS', maxQuestions: 'MAX_QUESTIONS', maxPipelineSteps: 'MAX_PIPELINE_STEPS', tokenBudgetPipeline: 'TOKEN_BUDGET_PIPELINE', maxRequestTokens: 'MAX_REQUEST_TOKENS', maxInboxMb: 'MAX_INBOX_MB' } as const;

export const EMPTY_PROJECT_CONFIG: ProjectConfig = { file: null, models: {}, stages: {}, limitsEnv: {}, prices: {}, warnings: [] };

/**
 * Reads and checks `<rootDir>/autoteam.config.json`; none there is the empty configuration. `env` is
 * read only to warn about MCP servers whose `${VAR}`s are not set.
 */
export function loadProjectConfig(rootDir: string, env: NodeJS.ProcessEnv = process.env): ProjectConfig {
  const file = path.join(path.resolve(rootDir), CONFIG_FILE);
  if (!fs.existsSync(file)) return EMPTY_PROJECT_CONFIG;
  const fail = (detail: string): never => {
    throw new ConfigError(`${file}: ${detail}`);
  };
  let raw: unknown;
  if (fs.statSync(file).isDirectory()) return fail('is a folder, not a file: move it away to start');
  // A byte-order mark (what some Windows editors write) is not a mistake.
  const text = fs.readFileSync(file, 'utf8').replace(/^\uFEFF/, '');
  try {
    raw = JSON.parse(text);
  } catch (error) {
    return fail(describeJsonError(error, text));
  }
  const parsed = ProjectConfigSchema.safeParse(raw);
  if (!parsed.success) return fail(describeZodError(parsed.error, keyHint));
  const data = parsed.data;
  const builtin = new Map<string, StageDefinition>(BUILTIN_STAGES.map((definition) => [definition.stage, definition]));
  const stages: Record<string, StageSpec> = {};
  const known = new Set(TEAMMATE_TOOLS.keys());
  const stageNames = new Set([...builtin.keys(), ...Object.keys(data.stages ?? {})]);
  for (const [stage, entry] of Object.entries(data.stages ?? {})) {
    const at = `stages.${stage}`;
    const base = builtin.get(stage) ?? null;
    if (entry.prompt && entry.promptFile) fail(`${at}: give prompt or promptFile, not both`);
    let prompt = entry.prompt;
    if (entry.promptFile) {
      const promptPath = path.resolve(path.dirname(file), entry.promptFile);
      if (!fs.existsSync(promptPath)) fail(`${at}.promptFile: ${promptPath} does not exist`);
      if (!fs.statSync(promptPath).isFile()) fail(`${at}.promptFile: ${promptPath} is not a file`);
      prompt = fs.readFileSync(promptPath, 'utf8').trim();
      if (!prompt) fail(`${at}.promptFile: ${promptPath} is empty`);
    }
    if (!base) {
      // A new stage says everything: who works it, how, with what, and where it leads.
      if (!entry.role) {
        const near = closestWord(stage, [...builtin.keys()]);
        fail(`${at}.role: a new stage needs the role that works it${near ? ` (or did you mean the stage ${near}?)` : ''}`);
      }
      if (!prompt) fail(`${at}: a new stage needs a prompt (or promptFile)`);
      if (!entry.tools) fail(`${at}.tools: a new stage needs its tools (e.g. read_file, write_file, complete_stage, fail_task)`);
      if (!entry.signals || Object.keys(entry.signals).length === 0) fail(`${at}.signals: a new stage needs a signal, e.g. { "complete_stage": { "next": "approved" } }`);
    }
    if (base && entry.role && entry.role !== base.role) fail(`${at}.role: the ${stage} stage is worked by ${base.role}`);
    const transitions = { ...(base?.transitions ?? {}), ...(entry.signals ?? {}) };
    for (const [signal, transition] of Object.entries(entry.signals ?? {})) {
      if (!known.has(signal)) fail(`${at}.signals.${signal}: no tool named '${signal}'`);
      if (base && !(signal in base.transitions)) fail(`${at}.signals.${signal}: the ${stage} stage's signals are ${Object.keys(base.transitions).join(', ')}`);
      if (transition.next !== 'approved' && !stageNames.has(transition.next)) fail(`${at}.signals.${signal}.next: no stage '${transition.next}' (stages: ${[...stageNames].join(', ')}, or approved)`);
      if (transition.next === stage && !transition.revise) fail(`${at}.signals.${signal}.next: a stage cannot lead to itself (a revision loop needs "revise": true)`);
      (transition.carry ?? []).forEach((key, i) => {
        if (!ARTIFACT_KEYS.has(key)) fail(`${at}.signals.${signal}.carry.${i}: no artifact '${key}' (artifacts: ${[...ARTIFACT_KEYS].sort().join(', ')})`);
      });
    }
    const tools = entry.tools ?? [...(base?.tools ?? [])];
    tools.forEach((tool, i) => {
      if (!known.has(tool)) fail(`${at}.tools.${i}: no tool named '${tool}' (tools: ${[...known].sort().join(', ')})`);
    });
    const missing = Object.keys(transitions).filter((signal) => !tools.includes(signal));
    if (missing.length) fail(`${at}.tools: must include the stage's signal tool${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`);
    stages[stage] = {
      ...(entry.role ? { role: entry.role } : {}),
      ...(entry.title ? { title: entry.title } : {}),
      ...(prompt ? { prompt } : {}),
      ...(entry.tools ? { tools: entry.tools } : {}),
      ...(entry.signals ? { signals: entry.signals } : {}),
      ...(entry.retry ? { retry: entry.retry } : {}),
    };
  }
  const roles = new Set(['any', ...BUILTIN_STAGES.map((d) => d.role), ...Object.values(stages).flatMap((spec) => (spec.role ? [spec.role] : []))]);
  // What will not stop a run but will leave a stage waiting: said once at start.
  const warnings: string[] = [];
  const targets = new Set<string>([BUILTIN_STAGES[0]!.stage]);
  for (const [name, definition] of builtin) for (const t of Object.values({ ...definition.transitions, ...(stages[name]?.signals ?? {}) })) targets.add(t.next);
  for (const spec of Object.values(stages)) for (const t of Object.values(spec.signals ?? {})) targets.add(t.next);
  for (const name of Object.keys(stages)) {
    if (!builtin.has(name) && !targets.has(name)) warnings.push(`stages.${name}: no signal leads to this stage, so no task of it is ever posted`);
  }
  const unstaffed: Array<{ role: string; warning: string }> = [];
  if (data.team) {
    // A member with count 0 is left to the team's sizing, which names that count when the team starts.
    const staffed = new Set(data.team.map((m) => m.role));
    for (const name of targets) {
      if (name === 'approved') continue;
      const role = stages[name]?.role ?? builtin.get(name)?.role;
      if (role && !staffed.has(role) && !staffed.has('any')) unstaffed.push({ role, warning: `stages.${name}: no teammate in team has the role '${role}'; its tasks wait until one joins (autoteam worker --role ${role})` });
    }
    warnings.push(...unstaffed.map((gap) => gap.warning));
  }
  // A stage that ends by submitting files, given no write_file: a model must write them through bash, and the offline one cannot.
  for (const [name, spec] of Object.entries(stages)) {
    const signals = Object.keys({ ...(builtin.get(name)?.transitions ?? {}), ...(spec.signals ?? {}) });
    if (spec.tools && signals.includes('submit_for_review') && !spec.tools.includes('write_file')) warnings.push(`stages.${name}.tools: no write_file, so the files submit_for_review submits can be written only through bash (the offline model's engineer cannot write them)`);
  }
  warnings.push(...hookMatcherWarnings(data.hooks, [...stageNames]));
  for (const [i, member] of (data.team ?? []).entries()) {
    if (!roles.has(member.role)) fail(`team.${i}.role: ${unknownRole(member.role, roles)}`);
  }
  const names = (data.team ?? []).map((m) => m.name);
  const lower = names.map((name) => name.toLowerCase());
  const twice = names.findIndex((name, i) => lower.indexOf(name.toLowerCase()) !== i);
  if (twice >= 0) {
    const first = names[lower.indexOf(lower[twice]!)]!;
    // On a case-insensitive disk (macOS's) two names that differ only in case would share an inbox file.
    fail(first === names[twice] ? `team: the name '${first}' is given twice` : `team: the names '${first}' and '${names[twice]}' differ only in case; names must differ in more than case (a case-insensitive disk, as macOS's, keeps one inbox file for both)`);
  }
  // The lead's name on the board (team-registry.ts): a teammate under it would be refused at start.
  const lead = lower.indexOf('lead');
  if (lead >= 0) fail(names[lead] === 'lead' ? `team.${lead}.name: 'lead' is the team lead's name; choose another` : `team.${lead}.name: '${names[lead]}' differs from the team lead's name 'lead' only in case; choose another`);
  for (const key of Object.keys(data.models ?? {})) {
    if (key !== 'default' && !roles.has(key)) fail(`models.${key}: not 'default', and ${unknownRole(key, roles)}`);
  }
  const mcpServers = data.mcpServers ? mcpSpecs(data.mcpServers, roles, builtin, stages, env, fail, warnings) : undefined;
  const limitsEnv: Record<string, string> = {};
  for (const [key, value] of Object.entries(data.limits ?? {})) limitsEnv[LIMIT_ENV[key as keyof typeof LIMIT_ENV]] = String(value);
  const models: Record<string, ModelOverrides> = {};
  for (const [key, choice] of Object.entries(data.models ?? {})) models[key] = { ...(choice.provider ? { provider: choice.provider } : {}), ...(choice.model ? { model: choice.model } : {}) };
  return {
    file,
    ...(data.team ? { team: data.team.map((m) => ({ name: m.name, role: m.role, ...(m.prompt ? { prompt: m.prompt } : {}), ...(m.count !== undefined ? { count: m.count } : {}) })) } : {}),
    models,
    stages,
    limitsEnv,
    prices: Object.fromEntries(Object.entries(data.prices ?? {}).map(([id, price]) => [id, { input: price.input, output: price.output, cacheRead: price.cacheRead }])),
    ...(data.lead?.tools ? { leadTools: [...new Set(data.lead.tools)] } : {}),
    ...(data.hooks ? { hooks: data.hooks } : {}),
    ...(mcpServers && Object.keys(mcpServers).length ? { mcpServers } : {}),
    ...(data.agentsMd ? { agentsMd: { ...data.agentsMd } } : {}),
    ...(data.autoMerge ? { autoMerge: true } : {}),
    // A path is from the config file's folder, as promptFile is.
    ...(data.repository ? { repository: { remote: absoluteRemote(data.repository.remote, path.dirname(file)), ...(data.repository.base ? { base: data.repository.base } : {}) } } : {}),
    warnings,
    ...(unstaffed.length ? { unstaffed } : {}),
  };
}

/** Whether and how much of the repository's AGENTS.md files reach the teammates: `--no-agents-md` (`flag` false) over the config over the defaults. */
export function agentsMdSettings(project: ProjectConfig, flag?: boolean): AgentsMdSettings {
  return { enabled: flag !== false && project.agentsMd?.enabled !== false, maxBytes: project.agentsMd?.maxBytes ?? DEFAULT_AGENTS_MD_BYTES };
}

/** `mcpServers` checked against the team's roles and stages, with a warning per variable that is not set. */
function mcpSpecs(
  entries: Record<string, McpServerEntry>,
  roles: ReadonlySet<string>,
  builtin: ReadonlyMap<string, StageDefinition>,
  stages: Record<string, StageSpec>,
  env: NodeJS.ProcessEnv,
  fail: (detail: string) => never,
  warnings: string[],
): Record<string, McpServerSpec> {
  const stageRoles = new Map<string, string>();
  for (const [name, definition] of builtin) stageRoles.set(name, stages[name]?.role ?? definition.role);
  for (const [name, spec] of Object.entries(stages)) if (spec.role) stageRoles.set(name, spec.role);
  const specs = checkMcpServers(entries, { roles, stageRoles }, fail, (detail) => warnings.push(detail));
  for (const [name, spec] of Object.entries(specs)) {
    const unset = serverVariables(spec).filter((variable) => !env[variable]);
    if (unset.length) warnings.push(`mcpServers.${name}: ${unset.map((v) => `\${${v}}`).join(', ')} not set, so the server will not start`);
  }
  return specs;
}


/** The default configuration, as `autoteam init` writes it: exactly what runs without a file. */
export function defaultProjectConfig(): ProjectConfigFile {
  return {
    team: [
      { name: 'analyst', role: 'analyst' },
      { name: 'engineer', role: 'engineer' },
      { name: 'reviewer', role: 'reviewer' },
    ],
    models: {},
    stages: Object.fromEntries(
      BUILTIN_STAGES.map((definition) => {
        const signals = Object.fromEntries(
          Object.entries(definition.transitions).map(([signal, t]) => [signal, { next: t.next, ...(t.revise ? { revise: true } : {}), ...(t.carry ? { carry: [...t.carry] } : {}) }]),
        );
        return [definition.stage, { prompt: definition.systemPrompt, tools: [...definition.tools], signals }];
      }),
    ) as ProjectConfigFile['stages'],
    limits: { maxRevisions: 3, maxTurns: 30, maxQuestions: 8, maxPipelineSteps: 60, tokenBudgetPipeline: 500_000 },
    lead: { tools: [...LEAD_HANDS] },
    prices: {},
  };
}

/**
 * The model of every role: `--provider` / `--model` on the command line choose for all roles;
 * otherwise the config's `models.default`, and `models.<role>` for the roles it names. `--record` and
 * `--replay` wrap whatever is chosen. Errors in the file name the key.
 */
export function modelSpecs(env: NodeJS.ProcessEnv, project: ProjectConfig, cli: ModelOverrides = {}): { model: ModelSpec; models: Record<string, ModelSpec> } {
  const fromCli = cli.provider !== undefined || cli.model !== undefined;
  // A replay serves the recorded answers whatever model is named: a choice beside it would be ignored without a word.
  if (fromCli && cli.replay !== undefined) throw new ConfigError(`--replay and ${cli.provider !== undefined ? '--provider' : '--model'} contradict each other: a replay answers with the recorded calls, not a model; give one`);
  const wrap = { ...(cli.record !== undefined ? { record: cli.record } : {}), ...(cli.replay !== undefined ? { replay: cli.replay } : {}) };
  const resolve = (choice: ModelOverrides, key: string | null): ModelSpec => {
    try {
      return resolveModelSpec(env, { ...choice, ...wrap, ...(key ? { providerLabel: 'provider' } : {}) });
    } catch (error) {
      if (key === null || !project.file) throw error;
      throw new ConfigError(`${project.file}: ${key}: ${(error as Error).message}`);
    }
  };
  const model = resolve(fromCli ? cli : (project.models.default ?? {}), fromCli ? null : 'models.default');
  const models: Record<string, ModelSpec> = {};
  if (!fromCli && cli.replay === undefined) {
    for (const [role, choice] of Object.entries(project.models)) {
      if (role !== 'default') models[role] = resolve({ ...project.models.default, ...choice }, `models.${role}`);
    }
  }
  return { model, models };
}

/** A "did you mean" for each key the config's schema does not know: the nearest key where it stands. */
function keyHint(issue: z.core.$ZodIssue): string {
  if (issue.code !== 'unrecognized_keys') return '';
  const hints = issue.keys.flatMap((key) => {
    const near = closestWord(key, keysAt(ProjectConfigSchema, issue.path));
    const full = near && [...issue.path, near].join('.');
    // A key of the file's top level written one level down (`repository.autoMerge`): where it goes.
    if (!full && issue.path.length > 0 && keysAt(ProjectConfigSchema, []).includes(key)) return [`${key} goes at the top level of the file, not in ${issue.path.join('.')}`];
    // One unknown key is the one the hint is for; of several, each hint names its own.
    return full ? [issue.keys.length === 1 ? `did you mean ${full}?` : `did you mean ${full} for ${key}?`] : [];
  });
  return hints.length ? ` — ${hints.join(' ')}` : '';
}

/** The keys an object of `schema` takes at `path` (through optionals, arrays and records), or none. */
function keysAt(schema: z.core.$ZodType, path: readonly PropertyKey[]): string[] {
  const def = schema._zod.def as { type: string; shape?: Record<string, z.core.$ZodType>; innerType?: z.core.$ZodType; element?: z.core.$ZodType; valueType?: z.core.$ZodType };
  if (def.innerType) return keysAt(def.innerType, path);
  if (def.type === 'object' && def.shape) return path.length === 0 ? Object.keys(def.shape) : def.shape[String(path[0])] ? keysAt(def.shape[String(path[0])]!, path.slice(1)) : [];
  if (def.type === 'array' && def.element && path.length) return keysAt(def.element, path.slice(1));
  if (def.type === 'record' && def.valueType && path.length) return keysAt(def.valueType, path.slice(1));
  return [];
}
