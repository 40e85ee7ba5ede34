import type { ReplOptions } from './repl-command.js';

export async function runLineRepl(_options: ReplOptions): Promise<void> {
  console.log('REPL not built yet');
}
