import { describe, expect, it } from 'vitest';
import { childEnv } from '../../src/core/exec/env.js';

describe('childEnv', () => {
  it('drops secrets and keeps the ordinary environment', () => {
    const env = childEnv({
      PATH: '/usr/bin',
      HOME: '/home/me',
      LANG: 'C.UTF-8',
      ANTHROPIC_API_KEY: 'sk-1',
      ANTHROPIC_BASE_URL: 'https://example.test',
      OPENAI_ORG: 'org',
      GITHUB_TOKEN: 'gh',
      db_password: 'pw',
      AWS_SECRET_ACCESS_KEY: 'aws',
      GOOGLE_APPLICATION_CREDENTIALS: '/x.json',
      HTTP_AUTHORIZATION: 'Bearer x',
      UNSET: undefined,
    });
    expect(env).toEqual({ PATH: '/usr/bin', HOME: '/home/me', LANG: 'C.UTF-8' });
  });

  it('defaults to process.env and copies it', () => {
    const env = childEnv();
    expect(env.PATH).toBe(process.env.PATH);
    env.PATH = 'changed';
    expect(process.env.PATH).not.toBe('changed');
  });
});
