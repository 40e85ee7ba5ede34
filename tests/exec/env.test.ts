import { describe, expect, it } from 'vitest';
import { childEnv } from '../../src/core/exec/env.js';
import { redact, secretValues } from '../../src/core/trace/redact.js';
import { capOutput } from '../../src/core/exec/process.js';

describe('childEnv: an allow-list, not a deny-list', () => {
  it('keeps PATH, the locale and the terminal, and nothing else of the person\'s environment', () => {
    const env = childEnv({
      PATH: '/usr/bin',
      HOME: '/home/me',
      LANG: 'C.UTF-8',
      LC_ALL: 'C.UTF-8',
      TERM: 'xterm',
      ANTHROPIC_API_KEY: 'sk-1',
      ANTHROPIC_BASE_URL: 'https://example.test',
      OPENAI_ORG: 'org',
      GITHUB_TOKEN: 'gh',
      GH_PAT: 'ghp_x',
      DATABASE_URL: 'postgres://u:p@db/x',
      SLACK_WEBHOOK_URL: 'https://hooks.example/T/B/x',
      SOME_INNOCENT_LOOKING: 'value',
      UNSET: undefined,
    });
    expect(env).toEqual({ PATH: '/usr/bin', LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8', TERM: 'xterm' });
  });

  it('passes what the configuration names, and copies', () => {
    const env = childEnv({ PATH: '/usr/bin', PIP_INDEX_URL: 'https://mirror.example' }, ['PIP_INDEX_URL']);
    expect(env).toEqual({ PATH: '/usr/bin', PIP_INDEX_URL: 'https://mirror.example' });
    const own = childEnv();
    expect(own.PATH).toBe(process.env.PATH);
    own.PATH = 'changed';
    expect(process.env.PATH).not.toBe('changed');
  });
});

describe('redaction by value', () => {
  const env = {
    PATH: '/usr/local/bin:/usr/bin',
    GH_PAT: 'ghp_0123456789abcdef',
    SLACK_WEBHOOK_URL: 'https://hooks.example/services/T000/B000/XXXXXXXX',
    DATABASE_URL: 'postgres://app:s3cr3t-pw@db.internal:5432/app',
    MIRROR: 'https://user:mirror-pass@mirror.example/simple',
    MY_SERVICE_PASSWD: 'hunter2hunter2',
    SHORT_TOKEN: 'abc',
  };

  it('finds secret-looking names (PAT as a word, never PATH) and credentials in URLs', () => {
    const values = secretValues(env);
    expect(values).toEqual(expect.arrayContaining([env.GH_PAT, env.SLACK_WEBHOOK_URL, env.DATABASE_URL, env.MIRROR, 'mirror-pass', 's3cr3t-pw', env.MY_SERVICE_PASSWD]));
    expect(values).not.toContain(env.PATH);
    expect(values).not.toContain('abc');
  });

  it('replaces them in text and in JSON, the longest first', () => {
    const values = secretValues(env);
    const text = `push with ${env.GH_PAT}; db ${env.DATABASE_URL}; pw only s3cr3t-pw; ${JSON.stringify({ url: env.MIRROR })}`;
    const clean = redact(text, values);
    for (const value of values) expect(clean).not.toContain(value);
    expect(clean).toBe('push with [redacted]; db [redacted]; pw only [redacted]; {"url":"[redacted]"}');
  });

  it('replaces a secret cut short where a text was shortened (at … or at the end), not a mere shared start', () => {
    const key = 'sk-test-should-never-show-1234567890';
    expect(redact(`Analyse: uses the key ${key.slice(0, 19)}…`, [key])).toBe('Analyse: uses the key [redacted]…');
    expect(redact(`{"subject":"uses ${key.slice(0, 12)}…","more":"${key}"}`, [key])).toBe('{"subject":"uses [redacted]…","more":"[redacted]"}');
    expect(redact(`tail ${key.slice(0, 10)}`, [key])).toBe('tail [redacted]');
    // The first characters alone, followed by anything else, are not the secret.
    expect(redact('keys look like sk-test-should-x and sk-test', [key])).toBe('keys look like sk-test-should-x and sk-test');
  });

  it("a model provider's key is a secret from 6 characters (an endpoint may echo it); a placeholder key and another short secret-looking value are not", () => {
    const values = secretValues({ ANTHROPIC_API_KEY: 'sk-test', OPENAI_API_KEY: 'test', AUTH: '1', SHORT_TOKEN: 'abcdefg' });
    expect(values).toEqual(['sk-test']);
    // A local endpoint's documented key that it ignores (Ollama's) is a word in a task, not a secret.
    expect(secretValues({ OPENAI_API_KEY: 'ollama' })).toEqual([]);
    expect(redact('401 invalid x-api-key: sk-test (1 attempt)', values)).toBe('401 invalid x-api-key: [redacted] (1 attempt)');
  });

  it('a value with a trailing CR or spaces is a secret trimmed too: a client sends it trimmed, a model echoes it so', () => {
    for (const value of ['sk-ant-test-SECRET123\r', ' sk-ant-test-SECRET123 ']) {
      const values = secretValues({ ANTHROPIC_API_KEY: value });
      expect(values).toEqual(expect.arrayContaining([value, 'sk-ant-test-SECRET123']));
      expect(redact('fine, key sk-ant-test-SECRET123.', values)).toBe('fine, key [redacted].');
    }
  });
});

describe('capOutput', () => {
  it('redacts before it cuts: a secret across the cut, or at the start of the kept tail, is not left in halves', () => {
    const key = 'sk-ant-test-SECRET123-abcdefgh';
    process.env.AUTOTEAM_TEST_CUT_KEY = key;
    try {
      // 100 kept: 60 of the head, 40 of the tail.
      for (const at of [50, 5_000 - 42]) {
        const text = `${'A'.repeat(at)}${key}${'B'.repeat(5_000 - at - key.length)}`;
        const cut = capOutput(text, 100);
        expect(cut).toMatch(/more characters cut/);
        for (const piece of [key.slice(0, 8), key.slice(-8)]) expect(cut).not.toContain(piece);
      }
    } finally {
      delete process.env.AUTOTEAM_TEST_CUT_KEY;
    }
  });
});
