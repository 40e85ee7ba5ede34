import type { Task } from '../board/schemas.js';
import { ConfigError } from '../errors.js';
import { costWith, describeModel, modelId, type ModelSpec, providerSpec } from '../model/factory.js';
import type { PriceTable } from '../model/pricing.js';

/** The team's models as the lead shows and prices them: one default, and any per role (changed by /model). */
export class TeamModels {
  private readonly models: Map<string, ModelSpec>;

  constructor(
    private readonly model: ModelSpec,
    models: Readonly<Record<string, ModelSpec>> = {},
    /** The prices `costOf` reckons at (absent: the built-in list). */
    private readonly prices?: PriceTable,
  ) {
    this.models = new Map(Object.entries(models));
  }

  /** The spec a teammate of `role` starts on. */
  spec(role: string): ModelSpec {
    return this.models.get(role) ?? this.model;
  }

  set(role: string, spec: ModelSpec): void {
    this.models.set(role, spec);
  }

  /**
   * Teammates of `role` work on `spec` from now on; the spec they start on is returned. A recording
   * session records the new model too; a replayed one cannot change: its answers are the recording's.
   */
  change(role: string, spec: ModelSpec): ModelSpec {
    const current = this.spec(role);
    if (current.kind === 'replay') throw new ConfigError(`this session replays ${current.dir}: its models cannot change`);
    const next: ModelSpec = current.kind === 'record' && spec.kind !== 'record' ? { kind: 'record', dir: current.dir, inner: spec } : spec;
    this.set(role, next);
    return next;
  }

  /** Each of `teamRoles` and every role with a model of its own, and its model; then the one for other roles. */
  roleModels(teamRoles: readonly string[]): { roles: Array<{ role: string; model: string }>; others: string } {
    const roles = new Set([...teamRoles, ...this.models.keys()]);
    return { roles: [...roles].map((role) => ({ role, model: this.of(role) })), others: this.fallback };
  }

  /** The roles that have a model of their own. */
  roles(): string[] {
    return [...this.models.keys()];
  }

  /** The model of roles without one of their own, as shown. */
  get fallback(): string {
    return describeModel(this.model);
  }

  /** True on the offline model: its tokens cost nothing and are shown as tokens only. */
  get offline(): boolean {
    return providerSpec(this.model).kind === 'offline';
  }

  get label(): string {
    const perRole = [...this.models];
    if (perRole.length === 0) return describeModel(this.model);
    // The offline model's hint is said once, with the team's model.
    return [describeModel(this.model), ...perRole.map(([role, spec]) => `${role}: ${describeModel(spec, false)}`)].join(' · ');
  }

  /** The models' ids, for machines: the team's, then each role's own (`offline-scripted · engineer: claude-…`). */
  get ids(): string {
    return [modelId(this.model), ...[...this.models].map(([role, spec]) => `${role}: ${modelId(spec)}`)].join(' · ');
  }

  /** The model a teammate of `role` runs on, as shown (`hint`: the offline model says how to get a real one). */
  of(role: string, hint = true): string {
    return describeModel(this.spec(role), hint);
  }

  /**
   * Dollars `tasks` cost at their roles' models' prices (tokens as the board records them), or null
   * when a model has no price (a local one, the offline model) or nothing was spent yet.
   */
  costOf(tasks: readonly Task[]): number | null {
    let total: number | null = null;
    for (const task of tasks) {
      if (task.usage.calls === 0) continue;
      const usd = costWith(task.role ? this.spec(task.role) : this.model, task.usage, this.prices);
      if (usd === null) return null;
      total = (total ?? 0) + usd;
    }
    return total;
  }
}
