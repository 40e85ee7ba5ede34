import { AutoteamError, ConfigError } from '../errors.js';
import { unknownRole } from '../words.js';
import { BUILTIN_STAGES } from './builtin/index.js';
import { defineStage, type StageSpec } from './configured-stage.js';
import type { StageDefinition } from './stage.js';

/**
 * The stages a team works, as a value: the built-in ones, changed and added to by
 * autoteam.config.json (or by code, `with`). Whoever needs a stage is handed the registry; every
 * thread of a team builds the same one from the same configuration.
 */
export class StageRegistry {
  private readonly stages: ReadonlyMap<string, StageDefinition>;

  private constructor(definitions: readonly StageDefinition[]) {
    this.stages = new Map(definitions.map((definition) => [definition.stage, definition]));
  }

  static of(definitions: readonly StageDefinition[]): StageRegistry {
    if (definitions.length === 0) throw new ConfigError('a stage registry needs at least one stage');
    return new StageRegistry(definitions);
  }

  /** The built-in stages with a configuration's changes and new stages (a new stage's subject is its title and the requirement). */
  static from(specs: Readonly<Record<string, StageSpec>> = {}, base: readonly StageDefinition[] = BUILTIN_STAGES): StageRegistry {
    let registry = StageRegistry.of(base);
    for (const [name, spec] of Object.entries(specs)) registry = registry.with(defineStage(name, spec, registry.stages.get(name)));
    return registry;
  }

  /** This registry with `definition` added (or replacing the stage of its name). */
  with(definition: StageDefinition): StageRegistry {
    const next = new Map(this.stages);
    next.set(definition.stage, definition);
    return new StageRegistry([...next.values()]);
  }

  has(stage: string): boolean {
    return this.stages.has(stage);
  }

  get(stage: string): StageDefinition {
    const definition = this.stages.get(stage);
    if (!definition) throw new ConfigError(`unknown stage '${stage}' (stages: ${this.names().join(', ')}): every host of a board needs the same autoteam.config.json`);
    return definition;
  }

  /** Every stage, built-in ones first. */
  all(): StageDefinition[] {
    return [...this.stages.values()];
  }

  names(): string[] {
    return [...this.stages.keys()];
  }

  /** The stages a person may start a pipeline at (those with a `start` of their own). */
  starts(): string[] {
    return this.all().filter((stage) => stage.start).map((stage) => stage.stage);
  }

  /** Where a posted requirement starts unless told otherwise. */
  get first(): StageDefinition {
    return this.all()[0]!;
  }

  /** The stages a pipeline started at `from` can reach through their transitions (sending back included), `from` first. */
  reachable(from: string): StageDefinition[] {
    const seen = new Map<string, StageDefinition>();
    const visit = (stage: string) => {
      if (seen.has(stage)) return;
      const definition = this.get(stage);
      seen.set(stage, definition);
      for (const { next } of Object.values(definition.transitions)) if (next !== 'approved') visit(next);
    };
    visit(from);
    return [...seen.values()];
  }

  /** The roles a teammate may have: each stage's, and `any` (general tasks with no role). */
  roles(): string[] {
    return [...new Set(this.all().map((stage) => stage.role)), 'any'];
  }

  /** Where a posted requirement may start: the first stage, and each stage with a start of its own. */
  startable(): string[] {
    return [...new Set([this.first.stage, ...this.starts()])];
  }

  /** Refuses a start stage a front end may not post at (`startable`), naming the ones it may. */
  checkStart(stage: string): void {
    const startable = this.startable();
    if (!startable.includes(stage)) throw new AutoteamError(`stage: a pipeline cannot start at '${stage}' (it starts at one of ${startable.join(', ')})`, 'INVALID_STAGE');
  }

  /** Refuses a role no stage or task can use, naming the ones that exist. */
  checkRole(role: string): void {
    const known = this.roles();
    if (known.includes(role)) return;
    throw new ConfigError(unknownRole(role, known));
  }
}

/** The built-in stages alone (what runs without autoteam.config.json). */
export const BUILTIN_REGISTRY: StageRegistry = StageRegistry.of(BUILTIN_STAGES);
