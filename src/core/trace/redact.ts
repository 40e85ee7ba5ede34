/** Names that look like they hold a secret. `PAT` only as a word (never `PATH`); `*_HEADERS` (an OTLP collector's key). */
const SECRET_NAME = /KEY|TOKEN|SECRET|PASSW(OR)?D|PASSPHRASE|CREDENTIAL|AUTH|WEBHOOK|COOKIE|SESSION|PRIVATE|(^|_)PAT($|_)|(^|_)DSN($|_)|DATABASE_URL|_URI$|(^|_)HEADERS$/i;
/**
 * A model provider's key (ANTHROPIC_API_KEY, OPENAI_API_KEY, …): a secret from 6 characters (`sk-test`,
 * which an endpoint may echo in its error), not the 8 of other names; shorter, it is a placeholder a
 * local endpoint ignores (`dummy`, `test`), whose redaction would cut every `tests` in a task.
 */
const API_KEY_NAME = /(^|_)API_KEY$/i;
/** Keys a local endpoint takes and ignores, as its documentation gives them: words, not secrets. */
const PLACEHOLDER_KEYS = new Set(['ollama', 'lm-studio', 'lmstudio', 'unused', 'placeholder', 'not-needed', 'no-key', 'nokey', 'empty', 'none', 'dummy']);
/** How long the value of another secret-looking name must be to count: `AUTH=1` or `KEYMAP=us` would otherwise redact every `1` and `us`. */
const SECRET_MIN = 8;
/** `scheme://user:password@host…`: the password is a secret whatever the variable is called. */
const URL_CREDENTIALS = /^[a-z][a-z0-9+.-]*:\/\/[^:/@\s]*:([^@\s]+)@/i;

/**
 * Values of the environment that must never reach disk, a log or a model request: every value of a
 * secret-looking variable, and the password of any URL with credentials. Longest first, so a value
 * that contains another is replaced whole.
 */
export function secretValues(env: NodeJS.ProcessEnv = process.env): string[] {
  const values = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    if (typeof value !== 'string') continue;
    if (SECRET_NAME.test(name)) {
      // A value read from a file saved with CRLF (`KEY=$(cat key.txt)`) keeps its `\r`; a client
      // sends it trimmed, and a model echoes it trimmed.
      const least = !API_KEY_NAME.test(name) ? SECRET_MIN : PLACEHOLDER_KEYS.has(value.trim().toLowerCase()) ? Number.POSITIVE_INFINITY : 6;
      for (const secret of new Set([value, value.trim()])) if (secret.length >= least) values.add(secret);
    }
    const password = URL_CREDENTIALS.exec(value)?.[1];
    if (password && password.length >= 4) {
      values.add(value);
      values.add(password);
    }
  }
  return [...values].sort((a, b) => b.length - a.length);
}

export function redact(text: string, secrets: readonly string[] = secretValues()): string {
  let out = text;
  for (const secret of secrets) {
    if (out.includes(secret)) out = out.split(secret).join('[redacted]');
    // The same value inside JSON text has its quotes and backslashes escaped.
    const escaped = JSON.stringify(secret).slice(1, -1);
    if (escaped !== secret && out.includes(escaped)) out = out.split(escaped).join('[redacted]');
    out = redactCut(out, secret);
  }
  return out;
}

/** How much of a secret's start, cut where a text was shortened, still counts as the secret. */
const CUT_MIN = 8;

/**
 * A secret cut short where a text was shortened (a task's subject, a line for the screen:
 * `…uses sk-test-should-neve…`): its start, up to the cut (`…` or the end of the text), is as
 * secret as the whole.
 */
function redactCut(text: string, secret: string): string {
  const head = secret.slice(0, CUT_MIN);
  if (head.length < CUT_MIN || !text.includes(head)) return text;
  let out = '';
  let from = 0;
  for (let at = text.indexOf(head); at >= 0; at = text.indexOf(head, at + CUT_MIN)) {
    let length = CUT_MIN;
    while (length < secret.length && text[at + length] === secret[length]) length++;
    const end = at + length;
    if (end !== text.length && text[end] !== '…') continue;
    out += `${text.slice(from, at)}[redacted]`;
    from = end;
  }
  return out + text.slice(from);
}
