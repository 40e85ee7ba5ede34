import type { Task } from '../board/schemas.js';
import { costWith, describeModel, type ModelSpec, providerSpec } from '../model/factory.js';

/** The team's models as the lead shows and prices them: one default, and any per role. */
export class TeamModels {
  constructor(
    private readonly model: ModelSpec,
    private readonly models: Readonly<Record<string, ModelSpec>> = {},
  ) {}

  /** True on the offline model: its tokens cost nothing and are shown as tokens only. */
  get offline(): boolean {
    return providerSpec(this.model).kind === 'offline';
  }

  get label(): string {
    const perRole = Object.entries(this.models);
    if (perRole.length === 0) return describeModel(this.model);
    return [describeModel(this.model), ...perRole.map(([role, spec]) => `${role}: ${describeModel(spec)}`)].join(' · ');
  }

  /** The model a teammate of `role` runs on, as shown. */
  of(role: string): string {
    return describeModel(this.models[role] ?? this.model);
  }

  /**
   * Dollars `tasks` cost at their roles' models' prices (tokens as the board records them), or null
   * when a model has no price (a local one, the offline model).
   */
  costOf(tasks: readonly Task[]): number | null {
    let total = 0;
    for (const task of tasks) {
      if (task.usage.calls === 0) continue;
      const usd = costWith((task.role ? this.models[task.role] : undefined) ?? this.model, task.usage);
      if (usd === null) return null;
      total += usd;
    }
    return total;
  }
}
