import type { TeammateSettings } from '../core/agent/settings.js';

export interface ReplOptions {
  dir: string;
  auto: boolean;
  team: boolean;
  settings: TeammateSettings;
}

export async function startRepl(options: ReplOptions): Promise<void> {
  const { runLineRepl } = await import('./line-repl.js');
  await runLineRepl(options);
}
