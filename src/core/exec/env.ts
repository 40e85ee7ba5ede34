/** What a process the runtime starts may inherit: nothing secret, nothing that names a host. */
const ALLOWED = /^(PATH|LANG|LANGUAGE|LC_[A-Z_]+|TERM|TZ|COLUMNS|LINES)$/;

/**
 * The environment for subprocesses, by allow-list: `PATH`, the locale and the terminal, nothing else
 * of `base` (no keys, tokens, database URLs or webhooks, whatever they are called). A Sandbox adds a
 * private HOME and TMPDIR and the variables the configuration passes on purpose.
 */
export function childEnv(base: NodeJS.ProcessEnv = process.env, pass: readonly string[] = []): Record<string, string> {
  const env: Record<string, string> = {};
  const passed = new Set(pass);
  for (const [name, value] of Object.entries(base)) {
    if (value !== undefined && (ALLOWED.test(name) || passed.has(name))) env[name] = value;
  }
  env.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  return env;
}
