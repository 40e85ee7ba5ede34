/**
 * /team right after the start lists the teammates started: `starting` until each thread joins the
 * registry (a moment later), then as the registry has it. Never "no teammates" while they start, nor
 * the record an earlier run of the same name left on the board.
 */
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { fileBoard } from '../../src/core/board/board.js';
import { type LeadEvent, LeadSession } from '../../src/core/lead/session.js';
import { runLineRepl } from '../../src/cli/line-repl.js';
import { type CommandIO, runLine } from '../../src/frontend/commands.js';
import { HANG_MS } from '../helpers/agent-wait.js';
import { sessionsOnTempBoards } from '../helpers/repl-session.js';

const TEAM = [
  { name: 'analyst', role: 'analyst' },
  { name: 'engineer', role: 'engineer' },
];

const made = sessionsOnTempBoards('autoteam-team-start-');
const board = made.board;
const session = (root: string): LeadSession => made.session({ rootDir: root, model: { kind: 'offline', reason: 'test' } });

/** What /team prints, as the REPLs run it. */
async function team(lead: LeadSession): Promise<string> {
  let printed = '';
  const io: CommandIO = { session: lead, print: (text) => (printed += `${text}\n`), askLead: (text) => lead.ask(text) };
  await runLine('/team', io);
  return printed;
}

/** Resolves once every one of `names` has reported a status (its thread joined the registry). */
function reported(lead: LeadSession, names: readonly string[]): Promise<void> {
  const waiting = new Set(names);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${[...waiting].join(', ')} to report`)), HANG_MS);
    const unsubscribe = lead.subscribe((event: LeadEvent) => {
      if (event.type === 'teammate' && event.event.type === 'status') waiting.delete(event.event.name);
      if (waiting.size > 0) return;
      clearTimeout(timer);
      unsubscribe();
      resolve();
    });
  });
}

describe('/team while the team starts', () => {
  it('lists the teammates started as starting before their threads report, then as they report', async () => {
    const lead = session(board());
    // Subscribed first: no thread can report before the start has returned (its messages are later tasks).
    const joined = reported(lead, ['analyst', 'engineer']);
    await lead.start(TEAM);
    const before = await team(lead);
    expect(before).not.toContain('no teammates');
    expect(before).toContain('  analyst (analyst): starting\n');
    expect(before).toContain('  engineer (engineer): starting\n');
    expect(lead.snapshot().team.members.map(({ name, status, running }) => ({ name, status, running }))).toEqual([
      { name: 'analyst', status: 'starting', running: true },
      { name: 'engineer', status: 'starting', running: true },
    ]);

    await joined;
    const after = await team(lead);
    expect(after).toContain('  analyst (analyst): idle — looking for work\n');
    expect(after).toContain('  engineer (engineer): idle — looking for work\n');
    expect(after).not.toContain(': starting');
  });

  it('lists the team as starting while the start is still under way (a /team typed at once at the ink prompt)', async () => {
    const lead = session(board());
    const starting = lead.start(TEAM);
    const during = await team(lead);
    expect(during).not.toContain('no teammates');
    expect(during).toContain('  analyst (analyst): starting\n');
    expect(during).toContain('  engineer (engineer): starting\n');
    await starting;
    expect(lead.snapshot().team.members.map(({ name, running }) => ({ name, running }))).toEqual([
      { name: 'analyst', running: true },
      { name: 'engineer', running: true },
    ]);
  });

  it('lists nobody starting after a start that failed', async () => {
    const root = board();
    // A model that cannot be made fails the start after the lease, before any thread is spawned.
    const lead = made.session({ rootDir: root, model: { kind: 'module', path: `${root}/no-such-model.mjs` } });
    const starting = lead.start(TEAM);
    expect(lead.snapshot().team.members.map((member) => member.status)).toEqual(['starting', 'starting']);
    await expect(starting).rejects.toThrow();
    expect(lead.snapshot().team.members).toEqual([]);
  });

  it("shows a teammate starting again as starting, not as the earlier run's record", async () => {
    const root = board();
    const earlier = fileBoard(root);
    await earlier.registry.join('analyst', 'analyst');
    await earlier.registry.setStatus('analyst', 'shutdown', { reason: 'shutdown approved' });
    await earlier.close();
    const lead = session(root);
    await lead.start(TEAM);
    const printed = await team(lead);
    expect(printed).toContain('  analyst (analyst): starting\n');
    expect(printed).not.toContain('shutdown');
    // Where the registry has it, once: the earlier record is not listed beside it.
    expect(lead.snapshot().team.members.map((member) => member.name)).toEqual(['analyst', 'engineer']);
  });

  it('in line mode, /team as the first line lists the team the start announced', async () => {
    const lead = session(board());
    const output = new PassThrough();
    let printed = '';
    output.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    await runLineRepl(lead, { input: Readable.from(['/team\n']), output, team: TEAM, graceMs: 1_000 });
    const lines = printed.split('\n');
    const started = lines.indexOf('started analyst (analyst), engineer (engineer)');
    const listed = lines.findIndex((line) => line.startsWith('team '));
    expect(started, printed).toBeGreaterThan(0);
    expect(listed, printed).toBeGreaterThan(started);
    // Each as it is when the line is read: still starting, or joined and looking for work.
    expect(lines[listed + 1], printed).toMatch(/^ {2}analyst \(analyst\): (starting|idle)/);
    expect(lines[listed + 2], printed).toMatch(/^ {2}engineer \(engineer\): (starting|idle)/);
    expect(printed).not.toContain('no teammates');
  });
});
