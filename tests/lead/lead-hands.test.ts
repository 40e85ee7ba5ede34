/**
 * The lead's own hands, as in the lesson: bash, read_file, write_file and edit_file in the lead's
 * folder, through a teammate's sandbox (the board and the key out of reach), plus claim_task and
 * idle; `lead.tools` turns the file and shell tools off. Through a loopback Messages API server (the
 * real SDK path) and the offline lead.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { boardOf } from '../helpers/repl-session.js';
import { LeadAgent } from '../../src/core/lead/lead-agent.js';
import { LeadSession } from '../../src/core/lead/session.js';
import { helpText } from '../../src/frontend/commands.js';
import { MessagesServer, ok, textMessage, toolUseMessage } from '../helpers/messages-server.js';

const KEY = 'sk-ant-test-lead-hands-0123456789';
const bwrap = spawnSync('bwrap', ['--version']).status === 0;

const roots: string[] = [];
const sessions: LeadSession[] = [];
const servers: MessagesServer[] = [];
const savedKey = process.env.ANTHROPIC_API_KEY;
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.close(1_000).catch(() => undefined);
  for (const server of servers.splice(0)) await server.close();
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
  if (savedKey === undefined) delete process.env.ANTHROPIC_API_KEY;
  else process.env.ANTHROPIC_API_KEY = savedKey;
});

function board(): string {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-lead-hands-')));
  roots.push(root);
  fs.writeFileSync(path.join(root, 'README.md'), '# Demo\n\nTeh best demo.\n');
  return root;
}

async function startSession(root: string, model: ConstructorParameters<typeof LeadSession>[0]['model'], extra: Partial<ConstructorParameters<typeof LeadSession>[0]> = {}) {
  const session = new LeadSession({ rootDir: root, model, repo: false, settings: { pollMs: 100, idleTimeoutMs: 0 }, ...extra });
  sessions.push(session);
  await session.start([]);
  return session;
}

/** The tool_result the server saw for a tool_use id. */
function resultOf(server: MessagesServer, id: string): { content: string; is_error?: boolean } {
  for (const request of server.requests) {
    for (const message of request.body.messages as Array<{ role: string; content: unknown }>) {
      if (!Array.isArray(message.content)) continue;
      const found = (message.content as Array<{ type: string; tool_use_id?: string; content?: unknown; is_error?: boolean }>).find((b) => b.type === 'tool_result' && b.tool_use_id === id);
      if (found) {
        const content = Array.isArray(found.content) ? (found.content as Array<{ text: string }>).map((b) => b.text).join('') : String(found.content);
        return { content, ...(found.is_error ? { is_error: true } : {}) };
      }
    }
  }
  throw new Error(`no tool_result for ${id}`);
}

describe('the lead agent with its own hands (loopback Messages API)', () => {
  it.runIf(bwrap)('reads and edits a file in its folder; its bash sees neither the board nor the key', async () => {
    const root = board();
    // The key lives in this process's environment, as it does when a person sets it; and in a .env.
    process.env.ANTHROPIC_API_KEY = KEY;
    fs.writeFileSync(path.join(root, '.env'), `ANTHROPIC_API_KEY=${KEY}\n`);
    const server = await MessagesServer.start([
      ok(toolUseMessage('read_file', { path: 'README.md' }, { toolUseId: 'toolu_read' })),
      ok(toolUseMessage('edit_file', { path: 'README.md', old_text: 'Teh', new_text: 'The' }, { toolUseId: 'toolu_edit' })),
      ok(toolUseMessage('bash', { command: 'ls -A; cat .tasks/* .team/config.json .env 2>&1; echo "env: $(wc -c < .env) bytes"; env' }, { toolUseId: 'toolu_bash' })),
      ok(toolUseMessage('read_file', { path: '.team/config.json' }, { toolUseId: 'toolu_board' })),
      ok(toolUseMessage('write_file', { path: 'autoteam.config.json', content: '{"hooks": {}}' }, { toolUseId: 'toolu_config' })),
      ok(textMessage('Fixed the typo in README.md.')),
    ]);
    servers.push(server);
    const session = await startSession(root, { kind: 'anthropic', model: 'claude-test', apiKey: KEY, baseURL: server.url });
    const task = await boardOf(session).tasks.create({ subject: 'secret-subject-on-the-board' });

    const reply = await session.leadAgent().handle('Fix the typo in README.md');
    expect(reply.text).toBe('Fixed the typo in README.md.');
    expect(server.errors).toEqual([]);
    expect(resultOf(server, 'toolu_read').content).toContain('Teh best demo.');
    expect(fs.readFileSync(path.join(root, 'README.md'), 'utf8')).toBe('# Demo\n\nThe best demo.\n');

    const shell = resultOf(server, 'toolu_bash').content;
    expect(shell).toContain('README.md');
    expect(shell).not.toContain(task.subject);
    expect(shell).not.toContain(KEY);
    expect(shell).not.toMatch(/"members"/);
    // The .env reads as empty, as the README says: not "Permission denied", which invites a way round.
    expect(shell).toContain('env: 0 bytes');
    expect(shell).not.toMatch(/Permission denied/);
    expect(fs.readFileSync(path.join(root, '.env'), 'utf8')).toBe(`ANTHROPIC_API_KEY=${KEY}\n`);
    // Its HOME and TMPDIR do not litter the person's folder.
    expect(fs.readdirSync(root).filter((name) => name === '.home' || name === '.tmp')).toEqual([]);
    // The file tools refuse the board's own files, saying why.
    expect(resultOf(server, 'toolu_board')).toMatchObject({ is_error: true, content: expect.stringMatching(/'\.team' is the board's own data/) });
    // Nor may it give itself a hook, which would run outside the sandbox.
    expect(resultOf(server, 'toolu_config')).toMatchObject({ is_error: true, content: expect.stringMatching(/'autoteam\.config\.json' holds the person's settings and hooks, off limits to the file tools\. Work on the other files of the folder\./) });
    expect(fs.existsSync(path.join(root, 'autoteam.config.json'))).toBe(false);
    // The key travelled only in its header.
    for (const request of server.requests) expect(request.rawBody).not.toContain(KEY);
    expect(server.requests[0]!.headers['x-api-key']).toBe(KEY);
    // Every hand, claim_task and idle were offered besides the team tools.
    const offered = (server.requests[0]!.body.tools as Array<{ name: string }>).map((tool) => tool.name);
    expect(offered).toEqual(expect.arrayContaining(['create_task', 'list_tasks', 'bash', 'read_file', 'write_file', 'edit_file', 'claim_task', 'idle']));
  });

  it("cannot plant autoteam's trusted files with its bash: a .env or config it makes is moved aside and said; its reply is redacted", async () => {
    const root = board();
    process.env.ANTHROPIC_API_KEY = KEY;
    const server = await MessagesServer.start([
      ok(toolUseMessage('bash', { command: 'echo AUTOTEAM_SANDBOX=off > .env; echo \'{"hooks":{}}\' > autoteam.config.json; echo made' }, { toolUseId: 'toolu_plant' })),
      // The key, as a model might echo it from what it read: never printed as it is.
      ok(textMessage(`Done; the key is ${KEY}.`)),
    ]);
    servers.push(server);
    const session = await startSession(root, { kind: 'anthropic', model: 'claude-test', apiKey: KEY, baseURL: server.url });

    const reply = await session.leadAgent().handle('make a .env that turns the sandbox off');
    expect(reply.text).toBe('Done; the key is [redacted].');
    const planted = resultOf(server, 'toolu_plant').content;
    expect(planted).toContain('made');
    for (const name of ['.env', 'autoteam.config.json']) {
      // Not there for the next start to read; kept beside it for the person, and said.
      expect(fs.existsSync(path.join(root, name))).toBe(false);
      const aside = fs.readdirSync(root).filter((entry) => entry.startsWith(`${name}.refused-`));
      expect(aside).toHaveLength(1);
      expect(planted).toContain(`[${name} was moved to ${aside[0]}: it is autoteam's own file, read when autoteam starts, and code run by an agent may not make it`);
    }
    expect(fs.readFileSync(path.join(root, fs.readdirSync(root).find((entry) => entry.startsWith('.env.refused-'))!), 'utf8')).toBe('AUTOTEAM_SANDBOX=off\n');
  });

  it('with lead.tools [] the file and shell tools are not offered, and /help says what the lead has', async () => {
    const root = board();
    const server = await MessagesServer.start([ok(textMessage('I can only post work for the team.'))]);
    servers.push(server);
    const session = await startSession(root, { kind: 'anthropic', model: 'claude-test', apiKey: KEY, baseURL: server.url }, { leadTools: [] });
    await session.leadAgent().handle('what files are here?');
    const offered = (server.requests[0]!.body.tools as Array<{ name: string }>).map((tool) => tool.name);
    for (const hand of ['bash', 'read_file', 'write_file', 'edit_file']) expect(offered).not.toContain(hand);
    expect(offered).toEqual(expect.arrayContaining(['create_task', 'claim_task', 'idle']));
    expect(String(server.requests[0]!.body.system[0].text)).toContain('You have no file or shell tools');
    expect(helpText(session.leadToolNames(), 1_000)).toMatch(/the lead's tools: create_task, .*claim_task, idle$/m);
    expect(helpText(session.leadToolNames())).not.toMatch(/bash/);
  });
});

describe('the offline lead with its own hands', () => {
  it('answers "what files are here" and "show me" from the real tools, and says what it cannot do', async () => {
    const root = board();
    const session = await startSession(root, { kind: 'offline', reason: 'test' });
    const agent = session.leadAgent();
    const listing = await agent.handle('What files are here?');
    expect(listing.text).toMatch(/README\.md/);
    // Led by the command, not by the tool's own status line, which is on screen already.
    expect(listing.text).toMatch(/^`ls -la`: exit 0\n/);
    expect(listing.text).not.toMatch(/ms\)|stdout:/);
    const shown = await agent.handle('show me README.md');
    expect(shown.text).toBe('README.md:\n# Demo\n\nTeh best demo.');
    const vague = await agent.handle('Fix the typo in README.md');
    expect(vague.text).toMatch(/^I cannot make that change: offline I only edit what is spelled out/);
    expect(session.snapshot().tasks).toEqual([]);
    const edited = await agent.handle("in README.md replace 'Teh' with 'The'");
    expect(edited.text).toMatch(/^edited README\.md/);
    expect(fs.readFileSync(path.join(root, 'README.md'), 'utf8')).toContain('The best demo.');
    const missing = await agent.handle('show me nope.txt');
    expect(missing.text).toMatch(/^That did not work: no such file 'nope\.txt'/);
    // A file it is given the words of, and a command spelled out: its own hands, not a pipeline.
    const written = await agent.handle("write a file notes.txt containing 'hello world'");
    expect(written.text).not.toMatch(/^That did not work/);
    expect(fs.readFileSync(path.join(root, 'notes.txt'), 'utf8')).toBe('hello world\n');
    const ran = await agent.handle('run `wc -w notes.txt`');
    expect(ran.text).toBe('`wc -w notes.txt`: exit 0\n2 notes.txt');
    const mixed = await agent.handle("run `ls nope.txt; echo listed`");
    expect(mixed.text).toMatch(/^`ls nope\.txt; echo listed`: exit 0\nstdout:\nlisted\nstderr:\n.*nope\.txt/);
    expect(session.snapshot().tasks).toEqual([]);
  });

  it('takes a general task itself with claim_task and works it under its own name', async () => {
    const root = board();
    const session = await startSession(root, { kind: 'offline', reason: 'test' });
    const task = await boardOf(session).tasks.create({ subject: 'Count the files', description: 'Run `ls | wc -l`.' });
    await session.leadAgent().handle(`take task #${task.id}`);
    const done = session.task(task.id)!;
    expect(done).toMatchObject({ status: 'completed', owner: session.lead });
    expect(done.result).toMatch(/^`ls \| wc -l`: exit 0/);
    // A stage task is not the lead's to take: refused by role, said back to the person.
    const stage = await session.post('Write a Python script that organizes my Downloads folder by file type.');
    const refused = await session.leadAgent().handle(`claim task ${stage.id}`);
    expect(refused.text).toMatch(/^That did not work: task #\d+ is for role analyst, not lead/);
  });
});
