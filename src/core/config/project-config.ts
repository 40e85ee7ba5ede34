import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { type Stage, STAGES, describeZodError } from '../board/schemas.js';
import { ConfigError } from '../errors.js';
import { type ModelOverrides, PROVIDERS, resolveModelSpec } from '../model/config.js';
import type { ModelSpec } from '../model/factory.js';
import type { Price } from '../model/pricing.js';
import { checkRole, STAGE_DEFINITIONS } from '../stages/definitions.js';

/**
 * `autoteam.config.json` at the board root: the team, a model per role, the stages' prompts and
 * tools, the limits, and prices. Optional — without it autoteam runs as documented; `autoteam init`
 * writes the defaults. Every error names the file and the key path.
 */
export const CONFIG_FILE = 'autoteam.config.json';

const count = (min: number) => z.number().int().min(min);

const ModelChoiceSchema = z.object({ provider: z.enum(PROVIDERS).optional(), model: z.string().min(1).optional() }).strict();
const StageSchema = z.object({ prompt: z.string().min(1).optional(), promptFile: z.string().min(1).optional(), tools: z.array(z.string().min(1)).min(1).optional() }).strict();

export const ProjectConfigSchema = z
  .object({
    $schema: z.string().optional(),
    team: z
      .array(z.object({ name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ and -, at most 64'), role: z.string().min(1), prompt: z.string().min(1).optional() }).strict())
      .min(1)
      .optional(),
    /** `default`, and any role: `{provider?, model?}`. */
    models: z.record(z.string(), ModelChoiceSchema).optional(),
    stages: z.object(Object.fromEntries(STAGES.map((stage) => [stage, StageSchema.optional()])) as Record<Stage, z.ZodOptional<typeof StageSchema>>).strict().optional(),
    limits: z
      .object({ maxRevisions: count(0), maxTurns: count(1), maxQuestions: count(0), maxPipelineSteps: count(1), tokenBudgetPipeline: count(1) })
      .partial()
      .strict()
      .optional(),
    /** Dollars per million tokens, by model id prefix; added to (and over) the built-in table. */
    prices: z.record(z.string(), z.object({ input: z.number().min(0), output: z.number().min(0), cacheRead: z.number().min(0).default(0) }).strict()).optional(),
  })
  .strict();

export type ProjectConfigFile = z.infer<typeof ProjectConfigSchema>;

/** A stage as configured: its prompt and tools (absent: the built-in ones). Plain data, it crosses to worker threads. */
export interface StageOverride {
  prompt?: string;
  tools?: string[];
}

export interface ProjectConfig {
  file: string | null;
  team?: Array<{ name: string; role: string; prompt?: string }>;
  /** role → the model choice for it; `default` for every role not named. */
  models: Record<string, ModelOverrides>;
  stages: Partial<Record<Stage, StageOverride>>;
  /** The limits as the environment variables they default (the environment and flags still win). */
  limitsEnv: Record<string, string>;
  prices: Record<string, Price>;
}

const LIMIT_ENV = { maxRevisions: 'MAX_REVISIONS', maxTurns: 'MAX_TURNS', maxQuestions: 'MAX_QUESTIONS', maxPipelineSteps: 'MAX_PIPELINE_STEPS', tokenBudgetPipeline: 'TOKEN_BUDGET_PIPELINE' } as const;

export const EMPTY_PROJECT_CONFIG: ProjectConfig = { file: null, models: {}, stages: {}, limitsEnv: {}, prices: {} };

/** Reads and checks `<rootDir>/autoteam.config.json`; none there is the empty configuration. */
export function loadProjectConfig(rootDir: string): ProjectConfig {
  const file = path.join(path.resolve(rootDir), CONFIG_FILE);
  if (!fs.existsSync(file)) return EMPTY_PROJECT_CONFIG;
  const fail = (detail: string): never => {
    throw new ConfigError(`${file}: ${detail}`);
  };
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (error) {
    return fail(`not valid JSON (${(error as Error).message})`);
  }
  const parsed = ProjectConfigSchema.safeParse(raw);
  if (!parsed.success) return fail(describeZodError(parsed.error));
  const data = parsed.data;
  const roles = new Set<string>();
  for (const [i, member] of (data.team ?? []).entries()) {
    try {
      checkRole(member.role);
    } catch (error) {
      fail(`team.${i}.role: ${(error as Error).message}`);
    }
    roles.add(member.role);
  }
  const names = (data.team ?? []).map((m) => m.name);
  const twice = names.find((name, i) => names.indexOf(name) !== i);
  if (twice) fail(`team: the name '${twice}' is given twice`);
  for (const key of Object.keys(data.models ?? {})) {
    if (key === 'default') continue;
    try {
      checkRole(key);
    } catch (error) {
      fail(`models.${key}: not 'default' or a role (${(error as Error).message})`);
    }
  }
  const stages: Partial<Record<Stage, StageOverride>> = {};
  const known = new Set(allToolNames());
  for (const stage of STAGES) {
    const entry = data.stages?.[stage];
    if (!entry) continue;
    if (entry.prompt && entry.promptFile) fail(`stages.${stage}: give prompt or promptFile, not both`);
    let prompt = entry.prompt;
    if (entry.promptFile) {
      const promptPath = path.resolve(path.dirname(file), entry.promptFile);
      if (!fs.existsSync(promptPath)) fail(`stages.${stage}.promptFile: ${promptPath} does not exist`);
      prompt = fs.readFileSync(promptPath, 'utf8').trim();
      if (!prompt) fail(`stages.${stage}.promptFile: ${promptPath} is empty`);
    }
    if (entry.tools) {
      entry.tools.forEach((tool, i) => {
        if (!known.has(tool)) fail(`stages.${stage}.tools.${i}: no tool named '${tool}' (tools: ${[...known].sort().join(', ')})`);
      });
      const signals = Object.keys(STAGE_DEFINITIONS[stage].transitions);
      const missing = signals.filter((signal) => !entry.tools!.includes(signal));
      if (missing.length) fail(`stages.${stage}.tools: must include the stage's signal tool${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`);
    }
    stages[stage] = { ...(prompt ? { prompt } : {}), ...(entry.tools ? { tools: entry.tools } : {}) };
  }
  const limitsEnv: Record<string, string> = {};
  for (const [key, value] of Object.entries(data.limits ?? {})) limitsEnv[LIMIT_ENV[key as keyof typeof LIMIT_ENV]] = String(value);
  const models: Record<string, ModelOverrides> = {};
  for (const [key, choice] of Object.entries(data.models ?? {})) models[key] = { ...(choice.provider ? { provider: choice.provider } : {}), ...(choice.model ? { model: choice.model } : {}) };
  return {
    file,
    ...(data.team ? { team: data.team.map((m) => ({ name: m.name, role: m.role, ...(m.prompt ? { prompt: m.prompt } : {}) })) } : {}),
    models,
    stages,
    limitsEnv,
    prices: Object.fromEntries(Object.entries(data.prices ?? {}).map(([id, price]) => [id, { input: price.input, output: price.output, cacheRead: price.cacheRead }])),
  };
}

/** Every tool a stage may be given: the stage tools of every built-in stage. */
function allToolNames(): string[] {
  return [...new Set(Object.values(STAGE_DEFINITIONS).flatMap((stage) => stage.tools))];
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
    stages: Object.fromEntries(STAGES.map((stage) => [stage, { prompt: STAGE_DEFINITIONS[stage].systemPrompt, tools: [...STAGE_DEFINITIONS[stage].tools] }])) as ProjectConfigFile['stages'],
    limits: { maxRevisions: 3, maxTurns: 30, maxQuestions: 8, maxPipelineSteps: 60, tokenBudgetPipeline: 500_000 },
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
  const wrap = { ...(cli.record !== undefined ? { record: cli.record } : {}), ...(cli.replay !== undefined ? { replay: cli.replay } : {}) };
  const resolve = (choice: ModelOverrides, key: string | null): ModelSpec => {
    try {
      return resolveModelSpec(env, { ...choice, ...wrap });
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
