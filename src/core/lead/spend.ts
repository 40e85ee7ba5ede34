import { costOf, formatCost, formatTokens } from '../model/pricing.js';
import type { TeamEvent } from '../events/schema.js';
import type { Usage } from '../model/types.js';

export interface MemberSpend {
  calls: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  /** Dollars at the model's list price, or null when the price is unknown (tokens only). */
  cost: number | null;
}

const EMPTY: MemberSpend = { calls: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cost: 0 };

/**
 * What each teammate and the lead spent, from the usage a thread of this session reports after every
 * model call (compaction included), and from the log's model calls of the lead and of another
 * process's teammates. Cost comes
 * from the price table; an unpriced model (a local one, the offline model) counts tokens only.
 */
export class Spend {
  private readonly members = new Map<string, MemberSpend>();

  private readonly price: (model: string, usage: Usage) => number | null;

  /**
   * `price`: dollars for `usage` on a model id, or null when it has no price (the session's provider
   * at its price table: model/factory.ts `pricer`); a boolean prices at the built-in list, counting
   * cached input inside the input tokens (true) or apart.
   */
  constructor(price: ((model: string, usage: Usage) => number | null) | boolean) {
    this.price = typeof price === 'function' ? price : (model, usage) => costOf(usage, model, price);
  }

  add(name: string, model: string, usage: Usage): void {
    const current = this.members.get(name) ?? EMPTY;
    const cost = this.price(model, usage);
    this.members.set(name, {
      calls: current.calls + 1,
      inputTokens: current.inputTokens + usage.inputTokens,
      outputTokens: current.outputTokens + usage.outputTokens,
      cacheReadTokens: current.cacheReadTokens + usage.cacheReadTokens,
      cost: current.cost === null || cost === null ? null : current.cost + cost,
    });
  }

  /**
   * A model call the board's log holds: counted for the lead (whose turns run on this process's main
   * thread, which reports to no port) and for a teammate of another process (`autoteam worker`). This
   * session's own threads report each call (`add`, with compactions), so `ownThread` keeps theirs
   * from counting twice.
   */
  addLogged(event: TeamEvent, ownThread: (name: string) => boolean): void {
    if (event.type !== 'model_call' || !event.agent || ownThread(event.agent)) return;
    this.add(event.agent, event.model, event);
  }

  of(name: string): MemberSpend {
    return this.members.get(name) ?? EMPTY;
  }

  /** Each teammate that spent anything, by name. */
  byMember(): Record<string, MemberSpend> {
    return Object.fromEntries(this.members);
  }

  total(): MemberSpend {
    let total: MemberSpend = EMPTY;
    for (const spend of this.members.values()) {
      total = {
        calls: total.calls + spend.calls,
        inputTokens: total.inputTokens + spend.inputTokens,
        outputTokens: total.outputTokens + spend.outputTokens,
        cacheReadTokens: total.cacheReadTokens + spend.cacheReadTokens,
        cost: total.cost === null || spend.cost === null ? null : total.cost + spend.cost,
      };
    }
    return total;
  }
}

/** `12k tok · $0.041` (cost only when the model has a price and something was spent). */
export function formatSpend(spend: MemberSpend, offline = false): string {
  const text = formatTokens(spend.inputTokens + spend.outputTokens + spend.cacheReadTokens);
  if (offline || spend.cost === null || spend.calls === 0) return text;
  return `${text} · ${formatCost(spend.cost)}`;
}
