/**
 * `mcpServers` in autoteam.config.json: Claude Code's `.mcp.json` shape plus roles, stages and an
 * allow-list; every mistake is one error naming the file and the key; `${VAR}` is checked when the
 * file is read and expanded only when a server starts, from the environment of the process that
 * starts it, the model's own settings never.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CONFIG_FILE, loadProjectConfig } from '../../src/core/config/project-config.js';
import { expandServer } from '../../src/core/mcp/expand.js';
import { mcpToolName } from '../../src/core/mcp/toolbox.js';
import { tempBoard } from '../helpers/agent-wait.js';

const folders: string[] = [];
afterAll(() => {
  for (const dir of folders) fs.rmSync(dir, { recursive: true, force: true });
});

function withConfig(config: unknown): string {
  const dir = tempBoard();
  folders.push(dir);
  fs.writeFileSync(path.join(dir, CONFIG_FILE), JSON.stringify(config));
  return dir;
}

describe('mcpServers in autoteam.config.json', () => {
  it('reads stdio and http servers as specs, references unexpanded, with warnings for what will not work', () => {
    const config = loadProjectConfig(
      withConfig({
        mcpServers: {
          github: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-github'], env: { GITHUB_TOKEN: '${GH_TOKEN}' }, roles: ['engineer', 'reviewer'], tools: ['get_issue'], timeout: 20 },
          docs: { type: 'http', url: 'https://docs.example/mcp', headers: { Authorization: 'Bearer ${DOCS_KEY:-none}' }, roles: ['analyst'], stages: ['requirements'] },
          idle: { command: 'idle-server' },
        },
      }),
      {},
    );
    expect(config.mcpServers).toEqual({
      github: { transport: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-github'], env: { GITHUB_TOKEN: '${GH_TOKEN}' }, roles: ['engineer', 'reviewer'], tools: ['get_issue'], timeoutMs: 20_000, startTimeoutMs: 30_000 },
      docs: { transport: 'http', url: 'https://docs.example/mcp', headers: { Authorization: 'Bearer ${DOCS_KEY:-none}' }, roles: ['analyst'], stages: ['requirements'], timeoutMs: 60_000, startTimeoutMs: 30_000 },
      idle: { transport: 'stdio', command: 'idle-server', args: [], env: {}, roles: [], timeoutMs: 60_000, startTimeoutMs: 30_000 },
    });
    expect(config.warnings).toEqual([
      'mcpServers.idle: no roles, so no teammate is offered its tools (add "roles": ["engineer"], say)',
      'mcpServers.github: ${GH_TOKEN} not set, so the server will not start',
    ]);
  });

  it.each([
    [{ x: { args: ['a'] } }, /autoteam\.config\.json: mcpServers\.x\.command: a stdio server needs its command/],
    [{ x: { type: 'http' } }, /mcpServers\.x\.url: an http server needs its url/],
    [{ x: { type: 'sse', url: 'http://h/sse' } }, /mcpServers\.x\.type: only "stdio" \(the default: command, args, env\) and "http"/],
    [{ x: { command: 'a', url: 'http://h/mcp' } }, /mcpServers\.x\.url: a stdio server has a command, args and env \(for a URL, set "type": "http"\)/],
    [{ x: { type: 'http', url: 'http://h/mcp', command: 'a' } }, /mcpServers\.x\.command: an http server has a url and headers, not command/],
    [{ x: { type: 'http', url: 'ftp://h/mcp' } }, /mcpServers\.x\.url: 'ftp:\/\/h\/mcp' is not an http\(s\) URL/],
    [{ x: { command: 'a', roles: ['tester'] } }, /mcpServers\.x\.roles\.0: unknown role 'tester' \(roles: any, analyst, engineer, reviewer\)/],
    [{ x: { command: 'a', roles: ['analist'] } }, /mcpServers\.x\.roles\.0: unknown role 'analist' — did you mean analyst\? \(roles: /],
    [{ x: { command: 'a', roles: ['engineer'], stages: ['review'] } }, /mcpServers\.x\.stages\.0: the review stage is worked by reviewer, which is not in mcpServers\.x\.roles/],
    [{ x: { command: 'a', roles: ['engineer'], stages: ['testing'] } }, /mcpServers\.x\.stages\.0: no stage 'testing' \(stages: requirements, implementation, review, or general\)/],
    [{ 'a__b': { command: 'a' } }, /mcpServers\.a__b: a server name: letters, digits, - and single _/],
    [{ x: { command: 'a', env: { KEY: '${ANTHROPIC_API_KEY}' } } }, /mcpServers\.x\.env\.KEY: \$\{ANTHROPIC_API_KEY\} is the model's setting; it never reaches an MCP server/],
    [{ x: { command: 'a', args: ['--token=${TOKEN'] } }, /mcpServers\.x\.args\.0: '\$\{' without its closing '\}'/],
    [{ x: { command: 'a', args: ['${not a name}'] } }, /mcpServers\.x\.args\.0: '\$\{not a name\}' is not \$\{NAME\} or \$\{NAME:-default\}/],
    [{ x: { type: 'http', url: 'http://h/mcp', headers: { Authorization: 'Bearer ${OPENAI_API_KEY}' } } }, /mcpServers\.x\.headers\.Authorization: \$\{OPENAI_API_KEY\} is the model's setting/],
    [{ x: { command: 'a', cwd: '/tmp' } }, /mcpServers\.x: Unrecognized key: "cwd"/],
    [{ x: { command: 'a', timeout: 0 } }, /mcpServers\.x\.timeout: a number of more than 0 is expected$/],
  ])('refuses %j with an error naming the field', (servers, error) => {
    expect(() => loadProjectConfig(withConfig({ mcpServers: servers }), {})).toThrow(error);
  });

  it('knows the roles and stages the config adds', () => {
    const config = loadProjectConfig(
      withConfig({
        stages: { tester: { role: 'tester', prompt: 'Test it.', tools: ['bash', 'complete_stage'], signals: { complete_stage: { next: 'approved' } } }, review: { signals: { approve_code: { next: 'tester' } } } },
        mcpServers: { browser: { command: 'browser-mcp', roles: ['tester'], stages: ['tester'] } },
      }),
      {},
    );
    expect(config.mcpServers?.browser).toMatchObject({ roles: ['tester'], stages: ['tester'] });
  });
});

describe('expanding a server when it starts', () => {
  const stdio = { transport: 'stdio' as const, command: '${BIN:-node}', args: ['--root=${ROOT}'], env: { TOKEN: '${SECRET_TOKEN}', PLAIN: 'as is' }, roles: ['engineer'], timeoutMs: 1, startTimeoutMs: 1 };

  it('takes ${VAR} and ${VAR:-default} from the environment it is given, and nothing else', () => {
    expect(expandServer('s', stdio, { ROOT: '/srv', SECRET_TOKEN: 't0ken', OTHER: 'never' })).toEqual({ transport: 'stdio', command: 'node', args: ['--root=/srv'], env: { TOKEN: 't0ken', PLAIN: 'as is' } });
    const http = expandServer('h', { transport: 'http', url: 'http://127.0.0.1:${PORT}/mcp', headers: { Authorization: 'Bearer ${KEY}' }, roles: [], timeoutMs: 1, startTimeoutMs: 1 }, { PORT: '8123', KEY: 'k' });
    expect(http).toEqual({ transport: 'http', url: new URL('http://127.0.0.1:8123/mcp'), headers: { Authorization: 'Bearer k' } });
  });

  it('names the field of a variable that is not set, without a value in sight', () => {
    expect(() => expandServer('s', stdio, { SECRET_TOKEN: 't0ken' })).toThrow('mcpServers.s.args.0: ${ROOT} is not set in the environment');
    expect(() => expandServer('s', stdio, { ROOT: '/srv' })).toThrow('mcpServers.s.env.TOKEN: ${SECRET_TOKEN} is not set in the environment');
    expect(() => expandServer('s', { ...stdio, env: { K: '${ANTHROPIC_API_KEY}' } }, { ROOT: '/', ANTHROPIC_API_KEY: 'sk-x' })).toThrow("mcpServers.s.env.K: ${ANTHROPIC_API_KEY} is the model's setting; it never reaches an MCP server");
  });
});

describe('tool names', () => {
  it('are mcp__<server>__<tool>, with what a provider refuses made _ and a long name cut with a hash', () => {
    expect(mcpToolName('github', 'get_issue')).toBe('mcp__github__get_issue');
    expect(mcpToolName('fs', 'read.file/v2')).toBe('mcp__fs__read_file_v2');
    const long = mcpToolName('server', 'x'.repeat(80));
    expect(long).toHaveLength(64);
    expect(long).toMatch(/^mcp__server__x+_[0-9a-f]{8}$/);
    expect(mcpToolName('server', `${'x'.repeat(80)}y`)).not.toBe(long);
  });
});
