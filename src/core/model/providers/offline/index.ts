import { z } from 'zod';
import { ConfigError } from '../../../errors.js';
import { costOf } from '../../pricing.js';
import type { Provider } from '../../provider.js';

export type OfflineSettings = {
  /** Why no real model runs, for the UI. */
  reason: string;
};

/** `A, B, C or D`. */
function orList(names: readonly string[]): string {
  return names.length > 1 ? `${names.slice(0, -1).join(', ')} or ${names.at(-1)}` : (names[0] ?? 'provider setting');
}

/** The scripted model: last in the registry, so it runs when nothing else is configured. */
export const offlineProvider: Provider<'offline', OfflineSettings> = {
  id: 'offline',
  needs: 'nothing',
  signals: [],
  noModelIds: "the offline model has no model ids: say 'offline'",
  detect: (_env, choice) => {
    // Named, it cannot take a model id: refused rather than dropped without a word.
    if (choice.namedBy && choice.model) throw new ConfigError(`${choice.namedBy} offline takes no model id, got --model ${choice.model}: the offline model has no model ids`);
    return { reason: choice.namedBy ? `${choice.namedBy} offline` : `no ${orList(choice.ahead)} is set` };
  },
  settingsSchema: z.object({ reason: z.string() }).strict(),
  async create() {
    const { ScriptedModel } = await import('../../scripted/scripted-model.js');
    return new ScriptedModel();
  },
  // How to get a real model, only when nothing named this one (`--provider offline`, a config's
  // `provider: offline` are choices: a key may well be set for another role).
  describe: (settings, hint) => (hint && !settings.reason.endsWith(' offline') ? 'offline scripted model — set ANTHROPIC_API_KEY or OPENAI_API_KEY for a real model' : 'offline scripted model'),
  modelId: () => 'offline-scripted',
  // Its own id has no price (tokens only); a role on a priced model is priced by that model's id.
  cost: (model, usage, prices) => costOf(usage, model, false, prices),
};
