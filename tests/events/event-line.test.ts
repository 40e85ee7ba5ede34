/**
 * `autoteam events` prints each event as one line that says what happened: an MCP server's every
 * state, the stop the activity stream leaves out included, names the server and says why.
 */
import { describe, expect, it } from 'vitest';
import { eventLine } from '../../src/cli/events-command.js';
import { MCP_SERVER_STATES, TeamEventSchema } from '../../src/core/events/schema.js';

describe('autoteam events lines', () => {
  it('name the MCP server and say why, in every state', () => {
    for (const state of MCP_SERVER_STATES) {
      const event = TeamEventSchema.parse({ type: 'mcp_server', seq: 7, ts: '2026-12-03T07:00:00.000Z', team: 'default', agent: 'eng', role: 'engineer', task: 3, server: 'files', state, detail: `detail of ${state}` });
      const line = eventLine(event);
      expect(line, state).toMatch(/^ {4}7 07:00:00 /);
      expect(line, state).toContain('MCP server files');
      expect(line, state).toContain(`detail of ${state}`);
    }
  });
});
