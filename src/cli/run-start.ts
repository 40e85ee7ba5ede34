import { parseWait } from '../core/agent/settings.js';
import { ConfigError } from '../core/errors.js';

/** `--timeout`, 10 minutes by default. A bare number is refused: is `--timeout 600` ten minutes or 0.6 s? */
export function runTimeout(value: string | undefined): number {
  if (value === undefined) return 10 * 60_000;
  // One set of examples for each way it can be wrong.
  const examples = '90s, 10m, 1h';
  // `0` takes no unit anywhere (README, Configuration): here it is no time at all, said as such.
  if (/^\s*\d+(\.\d+)?\s*$/.test(value) && Number(value) !== 0) throw new ConfigError(`--timeout: '${value}' needs a unit (examples: ${examples})`);
  const ms = parseWait(value, '--timeout', examples);
  if (ms <= 0) throw new ConfigError(`--timeout: '${value}' is no time at all (examples: ${examples})`);
  return ms;
}
