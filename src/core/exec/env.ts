/** Names that look like they hold a secret; a child process must never see the runtime's keys. */
const SECRET_NAME = /KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|AUTH/i;
const SECRET_PREFIX = /^(ANTHROPIC_|OPENAI_)/i;

/** A copy of `base` without secrets (API keys, tokens, passwords), for subprocesses run by tools. */
export function childEnv(base: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(base)) {
    if (value === undefined || SECRET_NAME.test(name) || SECRET_PREFIX.test(name)) continue;
    env[name] = value;
  }
  return env;
}
