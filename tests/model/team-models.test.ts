import { describe, expect, it } from 'vitest';
import { TeamModels } from '../../src/core/lead/team-models.js';

describe("the team's models as shown and as ids", () => {
  it('says the offline hint once, with the team model, and gives machines the ids', () => {
    const models = new TeamModels({ kind: 'offline', reason: 'no key' });
    expect(models.label).toBe('offline scripted model — set ANTHROPIC_API_KEY or OPENAI_API_KEY for a real model');
    expect(models.ids).toBe('offline-scripted');
    models.set('engineer', { kind: 'offline', reason: 'chosen' });
    models.set('reviewer', { kind: 'anthropic', apiKey: 'sk-test', model: 'claude-sonnet-5-5' });
    expect(models.label).toBe('offline scripted model — set ANTHROPIC_API_KEY or OPENAI_API_KEY for a real model · engineer: offline scripted model · reviewer: claude-sonnet-5-5');
    expect(models.label.match(/set ANTHROPIC_API_KEY/g)).toHaveLength(1);
    expect(models.ids).toBe('offline-scripted · engineer: offline-scripted · reviewer: claude-sonnet-5-5');
  });
});
