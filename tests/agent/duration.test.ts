/** Durations as a person types them: in settings, `run --timeout` and `events --since`. */
import { describe, expect, it } from 'vitest';
import { loadTeammateSettings, parseDuration, parseWait } from '../../src/core/agent/settings.js';
import { formatDuration } from '../../src/frontend/format.js';
import { parseSince } from '../../src/cli/events-command.js';

describe('parseDuration', () => {
  it('reads milliseconds, seconds, minutes and hours; a bare number only as 0', () => {
    expect(parseDuration('500ms', 'X')).toBe(500);
    expect(parseDuration('1.5s', 'X')).toBe(1_500);
    expect(parseDuration('2m', 'X')).toBe(120_000);
    expect(parseDuration('1h', 'X')).toBe(3_600_000);
    expect(parseDuration(' 2 h ', 'X')).toBe(7_200_000);
    expect(parseDuration('0', 'X')).toBe(0);
    // Is 300 five minutes or 300 ms? Refused, naming the setting, in every duration setting.
    expect(() => parseDuration('250', 'X')).toThrow("X: '250' needs a unit (examples: 500ms, 5s, 2m, 1h)");
    expect(() => loadTeammateSettings({ IDLE_TIMEOUT: '300' })).toThrow("IDLE_TIMEOUT: '300' needs a unit (examples: 500ms, 5s, 2m, 1h)");
    expect(() => loadTeammateSettings({}, { commandTimeout: '99' })).toThrow("--command-timeout: '99' needs a unit");
    expect(() => loadTeammateSettings({ POLL_INTERVAL: '5' })).toThrow("POLL_INTERVAL: '5' needs a unit");
  });

  it("refuses a duration under a setting's least in the terms it was given", () => {
    expect(() => loadTeammateSettings({}, { commandTimeout: '0s' })).toThrow("--command-timeout: '0s' is too short (at least 1s)");
    expect(() => loadTeammateSettings({ POLL_INTERVAL: '10ms' })).toThrow("POLL_INTERVAL: '10ms' is too short (at least 50ms)");
    expect(() => loadTeammateSettings({ RETRY_BACKOFF: '0' })).toThrow("RETRY_BACKOFF: '0' is too short (at least 50ms)");
  });

  it('refuses what is no duration, naming the setting', () => {
    expect(() => parseDuration('soon', 'ANSWER_TIMEOUT')).toThrow("ANSWER_TIMEOUT: 'soon' is not a duration (examples: 500ms, 5s, 2m, 1h)");
    expect(() => parseDuration('1d', 'X')).toThrow(/is not a duration/);
    expect(() => parseDuration('-5s', 'X')).toThrow(/is not a duration/);
  });
});

describe('a wait', () => {
  it('is refused past what a timer holds (about 24.8 days), which would fire at once, in every wait setting', () => {
    expect(parseWait('596h', 'X')).toBe(596 * 3_600_000);
    expect(() => parseWait('597h', '--timeout')).toThrow("--timeout: '597h' is longer than autoteam can wait (at most 596h, about 24 days)");
    expect(() => loadTeammateSettings({ IDLE_TIMEOUT: '1000h' })).toThrow(/^IDLE_TIMEOUT: '1000h' is longer than autoteam can wait/);
    expect(() => loadTeammateSettings({ ANSWER_TIMEOUT: '2000h' })).toThrow(/^ANSWER_TIMEOUT: '2000h' is longer/);
    expect(() => loadTeammateSettings({}, { pollInterval: '700h' })).toThrow(/^--poll-interval: '700h' is longer/);
    expect(() => loadTeammateSettings({}, { commandTimeout: '700h' })).toThrow(/^--command-timeout: '700h' is longer/);
    // How long ago (events --since) is no timer: any length.
    expect(parseSince('2000h', Date.parse('2026-12-03T12:00:00.000Z'))).toEqual(new Date(Date.parse('2026-12-03T12:00:00.000Z') - 2000 * 3_600_000));
  });

  it('sets how long a command an agent runs may take (COMMAND_TIMEOUT, --command-timeout), at least a second', () => {
    expect(loadTeammateSettings({}).commandTimeoutMs).toBe(30_000);
    expect(loadTeammateSettings({ COMMAND_TIMEOUT: '5m' }).commandTimeoutMs).toBe(300_000);
    expect(loadTeammateSettings({ COMMAND_TIMEOUT: '5m' }, { commandTimeout: '90s' }).commandTimeoutMs).toBe(90_000);
    expect(() => loadTeammateSettings({ COMMAND_TIMEOUT: '200ms' })).toThrow("COMMAND_TIMEOUT: '200ms' is too short (at least 1s)");
    expect(() => loadTeammateSettings({ COMMAND_TIMEOUT: 'soon' })).toThrow(/^COMMAND_TIMEOUT: /);
  });

  it('is said back in the units a person reads', () => {
    expect([250, 38_900, 61_000, 600_000, 5_400_000, 2_145_600_000].map(formatDuration)).toEqual(['250 ms', '38.9 s', '1 min 1 s', '10 min', '1 h 30 min', '596 h']);
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
