/** Durations as a person types them: in settings, `run --timeout` and `events --since`. */
import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../src/core/agent/settings.js';
import { parseSince } from '../../src/cli/events-command.js';

describe('parseDuration', () => {
  it('reads milliseconds, seconds, minutes and hours; a bare number is ms from 100 up, else seconds', () => {
    expect(parseDuration('500ms', 'X')).toBe(500);
    expect(parseDuration('1.5s', 'X')).toBe(1_500);
    expect(parseDuration('2m', 'X')).toBe(120_000);
    expect(parseDuration('1h', 'X')).toBe(3_600_000);
    expect(parseDuration(' 2 h ', 'X')).toBe(7_200_000);
    expect(parseDuration('250', 'X')).toBe(250);
    expect(parseDuration('5', 'X')).toBe(5_000);
  });

  it('refuses what is no duration, naming the setting', () => {
    expect(() => parseDuration('soon', 'ANSWER_TIMEOUT')).toThrow("ANSWER_TIMEOUT: 'soon' is not a duration (examples: 500ms, 5s, 2m, 1h)");
    expect(() => parseDuration('1d', 'X')).toThrow(/is not a duration/);
    expect(() => parseDuration('-5s', 'X')).toThrow(/is not a duration/);
  });
});

describe('events --since', () => {
  it('takes how long ago in hours too, as its help says (10m, 2h)', () => {
    const now = Date.parse('2026-12-03T12:00:00.000Z');
    expect(parseSince('2h', now)).toEqual(new Date('2026-12-03T10:00:00.000Z'));
    expect(parseSince('10m', now)).toEqual(new Date('2026-12-03T11:50:00.000Z'));
    expect(parseSince('42', now)).toBe(42);
  });
});
