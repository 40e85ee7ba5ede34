/**
 * The OpenAI-compatible provider through the official `openai` SDK against a loopback server that
 * speaks chat completions (`POST /v1/chat/completions`): a tool round trip, retries, one-line errors,
 * malformed tool arguments, and the provider choice from the environment and flags.
 */
import { ModelError } from '../../src/core/errors.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { identityMessages } from '../../src/core/agent/identity.js';
import { runLoop } from '../../src/core/agent/loop.js';
import { FATAL_MODEL_CODES } from '../../src/core/errors.js';
import { loadModelSpec } from '../../src/core/model/config.js';
import { createModel, describeModel } from '../../src/core/model/factory.js';
import { OpenAIModel } from '../../src/core/model/providers/openai/client.js';
import type { ModelMessage } from '../../src/core/model/types.js';
import { defineTool } from '../../src/core/tools/tool.js';
import { Trace } from '../../src/core/trace/trace.js';
import { loopContext, TEAM } from '../helpers/agent-team.js';
import { removeBoard, tempBoard } from '../helpers/agent-wait.js';
import { hang, MessagesServer, type ScriptedReply } from '../helpers/messages-server.js';

const KEY = 'sk-openai-test-key-123456';
const servers: MessagesServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

async function server(steps: Parameters<typeof MessagesServer.start>[0]): Promise<MessagesServer> {
  const started = await MessagesServer.start(steps, { path: '/v1/chat/completions' });
  servers.push(started);
  return started;
}

function completion(message: Record<string, unknown>, finish = 'stop', usage = { prompt_tokens: 120, completion_tokens: 30, prompt_tokens_details: { cached_tokens: 100 } }): ScriptedReply {
  return { body: { id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'local-model', choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish }], usage } };
}

function toolCalls(...calls: Array<[id: string, name: string, args: string]>): ScriptedReply {
  return completion({ content: null, tool_calls: calls.map(([id, name, args]) => ({ id, type: 'function', function: { name, arguments: args } })) }, 'tool_calls');
}

/** An error as the API sends one: its message, type and, where it has one, code (its lines say the type and the code). */
const error = (status: number, message: string, headers: Record<string, string> = {}, type = status >= 500 ? 'server_error' : 'invalid_request_error', code: string | null = null): ScriptedReply => ({ status, headers, body: { error: { message, type, param: null, code } } });

describe('OpenAIModel against a loopback chat-completions server', () => {
  it('round-trips a tool call: system, tools as functions, tool_calls ↔ tool_use, one tool message per result, ids kept, usage', async () => {
    const api = await server([toolCalls(['call_1', 'read_file', '{"path":"a.py"}'], ['call_2', 'read_file', '{"path":"b.py"}']), completion({ content: 'Both read.' })]);
    const model = new OpenAIModel({ model: 'local-model', apiKey: KEY, baseURL: `${api.url}/v1` });
    const tools = [{ name: 'read_file', description: 'Read a file.', input_schema: { type: 'object' as const, properties: { path: { type: 'string' } }, required: ['path'] } }];
    const first = await model.create({ system: 'You are a test.', messages: [{ role: 'user', content: 'Read a.py and b.py' }], tools, maxTokens: 500 });
    expect(first.stopReason).toBe('tool_use');
    expect(first.content).toEqual([
      { type: 'tool_use', id: 'call_1', name: 'read_file', input: { path: 'a.py' } },
      { type: 'tool_use', id: 'call_2', name: 'read_file', input: { path: 'b.py' } },
    ]);
    expect(first.usage).toEqual({ inputTokens: 120, outputTokens: 30, cacheReadTokens: 100, cacheWriteTokens: 0 });
    const history: ModelMessage[] = [
      { role: 'user', content: 'Read a.py and b.py' },
      { role: 'assistant', content: first.content },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_1', content: 'print(1)' },
          { type: 'tool_result', tool_use_id: 'call_2', content: 'no such file', is_error: true },
          { type: 'text', text: 'New messages: none' },
        ],
      },
    ];
    const second = await model.create({ system: 'You are a test.', messages: history, tools });
    expect(second).toMatchObject({ stopReason: 'end_turn', content: [{ type: 'text', text: 'Both read.' }] });

    const [one, two] = api.requests;
    expect(one!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(one!.body).toMatchObject({ model: 'local-model', max_tokens: 500, messages: [{ role: 'system', content: 'You are a test.' }, { role: 'user', content: 'Read a.py and b.py' }] });
    expect(one!.body.tools).toEqual([{ type: 'function', function: { name: 'read_file', description: 'Read a file.', parameters: tools[0]!.input_schema } }]);
    expect(two!.body.messages.slice(1)).toEqual([
      { role: 'user', content: 'Read a.py and b.py' },
      { role: 'assistant', content: null, tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.py"}' } },
        { id: 'call_2', type: 'function', function: { name: 'read_file', arguments: '{"path":"b.py"}' } },
      ] },
      { role: 'tool', tool_call_id: 'call_1', content: 'print(1)' },
      { role: 'tool', tool_call_id: 'call_2', content: 'Error: no such file' },
      { role: 'user', content: 'New messages: none' },
    ]);
    api.assertDone();
  });

  it('retries a 429 and then succeeds', async () => {
    const api = await server([error(429, 'slow down', { 'retry-after-ms': '1' }), completion({ content: 'ok' })]);
    const model = new OpenAIModel({ model: 'm', apiKey: KEY, baseURL: `${api.url}/v1` });
    expect((await model.create({ system: '', messages: [{ role: 'user', content: 'hi' }], tools: [] })).content).toEqual([{ type: 'text', text: 'ok' }]);
    expect(api.requests).toHaveLength(2);
  });

  it('fails a 429 that asks for more than a minute at once, saying the wait and carrying it for the task, instead of sleeping through it', async () => {
    const api = await server([error(429, 'slow down', { 'retry-after': '3600' }), error(429, 'slow down', { 'retry-after': '3600' })]);
    const model = new OpenAIModel({ model: 'm', apiKey: KEY, baseURL: `${api.url}/v1` });
    const limited = await model.create({ system: '', messages: [{ role: 'user', content: 'hi' }], tools: [] }).catch((e: ModelError) => e);
    expect(limited).toMatchObject({ code: 'MODEL_ERROR', retryAfterMs: 3_600_000 });
    expect((limited as Error).message).toMatch(/answered 429 invalid_request_error: slow down \(model 'm'\), and asks for no request for 60 min \(retry-after\)$/);
    expect(api.requests).toHaveLength(1);
  });

  it('maps 401 to MODEL_AUTH in one line without the key, and a 404 for the model to MODEL_NOT_FOUND', async () => {
    const api = await server([error(401, `Incorrect API key provided: ${KEY}`), error(404, "The model 'nope' does not exist")]);
    const bad = new OpenAIModel({ model: 'm', apiKey: KEY, baseURL: `${api.url}/v1` });
    const auth = await bad.create({ system: '', messages: [{ role: 'user', content: 'hi' }], tools: [] }).catch((e: Error & { code: string }) => e);
    expect(auth).toMatchObject({ code: 'MODEL_AUTH' });
    expect((auth as Error).message).toMatch(/^OPENAI_API_KEY was rejected by http:\/\/127\.0\.0\.1:\d+\/v1 \(401 invalid_request_error: /);
    expect((auth as Error).message).not.toContain(KEY);
    expect((auth as Error).message).not.toContain('\n');
    const missing = new OpenAIModel({ model: 'nope', apiKey: KEY, baseURL: `${api.url}/v1` });
    await expect(missing.create({ system: '', messages: [{ role: 'user', content: 'hi' }], tools: [] })).rejects.toMatchObject({
      code: 'MODEL_NOT_FOUND',
      message: expect.stringMatching(/Model 'nope' was not found .* set --model or MODEL_ID/),
    });
  });

  it('a path that is not there is MODEL_ENDPOINT, a body that is not JSON MODEL_BAD_RESPONSE: both stop a teammate, each after one request', async () => {
    const api = await server([
      error(404, 'Not Found'),
      { status: 200, body: '{"id": "chatcmpl-1", "choi', headers: { 'content-type': 'application/json' } },
    ]);
    const model = new OpenAIModel({ model: 'm', apiKey: KEY, baseURL: `${api.url}/v1` });
    const ask = () => model.create({ system: '', messages: [{ role: 'user', content: 'hi' }], tools: [] }).catch((e: Error & { code: string }) => e);
    await expect(ask()).resolves.toMatchObject({ code: 'MODEL_ENDPOINT', message: expect.stringMatching(/\/chat\/completions does not exist \(404 invalid_request_error: Not Found\): check OPENAI_BASE_URL/) });
    expect(api.requests).toHaveLength(1);
    await expect(ask()).resolves.toMatchObject({ code: 'MODEL_BAD_RESPONSE', message: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions answered with a body that is not JSON \(.+\): check OPENAI_BASE_URL$/) });
    expect(api.requests).toHaveLength(2);
    for (const code of ['MODEL_ENDPOINT', 'MODEL_BAD_RESPONSE']) expect(FATAL_MODEL_CODES.has(code)).toBe(true);
  });

  it('a first request refused (400, 413, 422) is MODEL_REFUSED, which fails its task at once; after a good answer, a passing fault; 408 and 409 stay retried', async () => {
    const api = await server([error(400, "'tools' is not supported by this model"), error(422, 'unprocessable'), completion({ content: 'ok' }), error(400, 'context too long', {}, 'invalid_request_error', 'context_length_exceeded')]);
    const ask = (model: OpenAIModel) => model.create({ system: '', messages: [{ role: 'user', content: 'hi' }], tools: [] }).catch((e: Error & { code: string }) => e);
    await expect(ask(new OpenAIModel({ model: 'm', apiKey: KEY, baseURL: `${api.url}/v1` }))).resolves.toMatchObject({
      code: 'MODEL_REFUSED',
      message: `Model API at ${api.url}/v1 refused the request for model 'm' (400 invalid_request_error: 'tools' is not supported by this model)`,
    });
    expect(api.requests).toHaveLength(1);
    await expect(ask(new OpenAIModel({ model: 'm', apiKey: KEY, baseURL: `${api.url}/v1` }))).resolves.toMatchObject({ code: 'MODEL_REFUSED', message: expect.stringContaining('(422 invalid_request_error: unprocessable)') });
    // Not a teammate's end: its task fails, and it goes on to the next.
    expect(FATAL_MODEL_CODES.has('MODEL_REFUSED')).toBe(false);
    const answered = new OpenAIModel({ model: 'm', apiKey: KEY, baseURL: `${api.url}/v1` });
    await expect(ask(answered)).resolves.toMatchObject({ content: [{ type: 'text', text: 'ok' }] });
    await expect(ask(answered)).resolves.toMatchObject({ code: 'MODEL_ERROR', message: expect.stringMatching(/refused the request for model 'm' \(400 invalid_request_error \(context_length_exceeded\): context too long\)/) });
    expect(api.requests).toHaveLength(4);
    const plain = await server([{ status: 400, body: 'tool use is not supported by this model', headers: { 'content-type': 'text/plain' } }]);
    await expect(ask(new OpenAIModel({ model: 'm', apiKey: KEY, baseURL: `${plain.url}/v1` }))).resolves.toMatchObject({ code: 'MODEL_REFUSED', message: `Model API at ${plain.url}/v1 refused the request for model 'm' (400: tool use is not supported by this model)` });
    // Compatible servers' own shapes keep their words: vLLM's error at the top of the body, and a bare string.
    const shapes = await server([
      { status: 400, body: { object: 'error', message: "This model's maximum context length is 4096 tokens", type: 'BadRequestError', param: null, code: 400 } },
      { status: 400, body: { error: 'something broke' } },
    ]);
    const shaped = () => ask(new OpenAIModel({ model: 'm', apiKey: KEY, baseURL: `${shapes.url}/v1` }));
    await expect(shaped()).resolves.toMatchObject({ code: 'MODEL_REFUSED', message: `Model API at ${shapes.url}/v1 refused the request for model 'm' (400 BadRequestError: This model's maximum context length is 4096 tokens)` });
    await expect(shaped()).resolves.toMatchObject({ code: 'MODEL_REFUSED', message: `Model API at ${shapes.url}/v1 refused the request for model 'm' (400: something broke)` });
    // A proxy's fields (LiteLLM's): a type of "None" and the status again as the code say nothing, and are left out.
    const proxy = await server([error(400, 'bad request', {}, 'None', '400')]);
    await expect(ask(new OpenAIModel({ model: 'm', apiKey: KEY, baseURL: `${proxy.url}/v1` }))).resolves.toMatchObject({ message: `Model API at ${proxy.url}/v1 refused the request for model 'm' (400: bad request)` });
    const retried = await server([error(409, 'conflict'), completion({ content: 'after a retry' })]);
    await expect(ask(new OpenAIModel({ model: 'm', apiKey: KEY, baseURL: `${retried.url}/v1`, maxRetries: 1 }))).resolves.toMatchObject({ content: [{ type: 'text', text: 'after a retry' }] });
  });

  it('after one good answer, a 404 or a body that is not JSON is a passing fault (MODEL_ERROR), not a wrong base URL', async () => {
    const api = await server([completion({ content: 'ok' }), error(404, 'Not Found'), { status: 200, body: '{"id": "chatcmpl-1", "choi', headers: { 'content-type': 'application/json' } }]);
    const model = new OpenAIModel({ model: 'm', apiKey: KEY, baseURL: `${api.url}/v1` });
    const ask = () => model.create({ system: '', messages: [{ role: 'user', content: 'hi' }], tools: [] }).catch((e: Error & { code: string }) => e);
    await expect(ask()).resolves.toMatchObject({ content: [{ type: 'text', text: 'ok' }] });
    await expect(ask()).resolves.toMatchObject({ code: 'MODEL_ERROR', message: expect.stringMatching(/does not exist \(404/) });
    await expect(ask()).resolves.toMatchObject({ code: 'MODEL_ERROR', message: expect.stringMatching(/answered with a body that is not JSON/) });
  });

  it('a server that does not answer in time is MODEL_TIMEOUT naming the setting to raise; a 5xx that outlasts the retries says so, apart from the server\'s words', async () => {
    const api = await server([hang(), error(500, 'boom'), error(500, 'boom')]);
    const slow = new OpenAIModel({ model: 'm', apiKey: KEY, baseURL: `${api.url}/v1`, timeoutMs: 50, maxRetries: 0 });
    await expect(slow.create({ system: '', messages: [{ role: 'user', content: 'hi' }], tools: [] })).rejects.toMatchObject({
      code: 'MODEL_TIMEOUT',
      message: `No answer from ${api.url}/v1 within 50 ms (0 retries): check the endpoint, or raise OPENAI_TIMEOUT_MS`,
    });
    const failing = new OpenAIModel({ model: 'm', apiKey: KEY, baseURL: `${api.url}/v1`, maxRetries: 1 });
    await expect(failing.create({ system: '', messages: [{ role: 'user', content: 'hi' }], tools: [] })).rejects.toMatchObject({
      code: 'MODEL_ERROR',
      message: `Model API at ${api.url}/v1 answered 500 server_error: boom — given up after 1 retries (model 'm')`,
    });
  });

  it('maps an unreachable server to MODEL_UNREACHABLE naming the URL', async () => {
    // A port that was free a moment ago: nothing listens there.
    const closed = await server([]);
    const url = `${closed.url}/v1`;
    await closed.close();
    servers.splice(servers.indexOf(closed), 1);
    const model = new OpenAIModel({ model: 'm', baseURL: url, maxRetries: 0 });
    await expect(model.create({ system: '', messages: [{ role: 'user', content: 'hi' }], tools: [] })).rejects.toMatchObject({
      code: 'MODEL_UNREACHABLE',
      message: `Cannot reach the model API at ${url} (ECONNREFUSED): check OPENAI_BASE_URL and the network`,
    });
  });

  it('a port fetch refuses (one browsers block) is said as such, not as a bare "bad port"', async () => {
    const model = new OpenAIModel({ model: 'm', baseURL: 'http://127.0.0.1:6000/v1', maxRetries: 0 });
    await expect(model.create({ system: '', messages: [{ role: 'user', content: 'hi' }], tools: [] })).rejects.toMatchObject({
      code: 'MODEL_UNREACHABLE',
      message: 'Cannot reach the model API at http://127.0.0.1:6000/v1 (bad port: fetch refuses this port, one browsers block; use another): check OPENAI_BASE_URL and the network',
    });
  });

  it('malformed tool arguments from the model become a tool error for the model, not a crash', async () => {
    const root = tempBoard();
    try {
      const api = await server([
        toolCalls(['call_x', 'echo', '{"text": "unterminated']),
        (request) => {
          const tool = request.body.messages.find((m: { role: string }) => m.role === 'tool');
          return completion({ content: `saw: ${tool.content}` });
        },
      ]);
      const ran: string[] = [];
      const echo = defineTool({
        name: 'echo',
        description: 'Echo.',
        inputSchema: z.object({ text: z.string() }),
        async run({ text }) {
          ran.push(text);
          return { content: text };
        },
      });
      const model = await createModel({ kind: 'openai', model: 'local', baseURL: `${api.url}/v1` });
      const result = await runLoop({
        model,
        system: 'test',
        tools: [echo],
        messages: [...identityMessages('eng', 'engineer', TEAM), { role: 'user', content: 'Task #1: echo' }],
        ctx: loopContext(root),
        agent: { name: 'eng', role: 'engineer', stage: null },
        maxTurns: 5,
        trace: new Trace(root),
      });
      expect(ran).toEqual([]);
      expect(result.outcome).toMatchObject({ kind: 'end_turn', text: expect.stringMatching(/^saw: Error: The arguments of echo were not a JSON object \(.*\): \{"text": "unterminated\. Call echo again/) });
      api.assertDone();
    } finally {
      removeBoard(root);
    }
  });
});

describe('choosing the provider', () => {
  it('infers it from the keys: Anthropic first, then OpenAI (a key or a base URL), else offline', () => {
    expect(loadModelSpec({}).kind).toBe('offline');
    expect(loadModelSpec({ ANTHROPIC_API_KEY: 'sk-ant', OPENAI_API_KEY: KEY })).toMatchObject({ kind: 'anthropic' });
    expect(loadModelSpec({ OPENAI_API_KEY: KEY })).toMatchObject({ kind: 'openai', model: 'gpt-4.1-mini', apiKey: KEY });
    const local = loadModelSpec({ OPENAI_BASE_URL: 'http://localhost:11434/v1', MODEL_ID: 'llama3.1' });
    expect(local).toEqual({ kind: 'openai', model: 'llama3.1', baseURL: 'http://localhost:11434/v1' });
    expect(describeModel(local)).toBe('llama3.1 via localhost:11434');
  });

  it('--provider / AUTOTEAM_PROVIDER and --model win; mistakes are one line naming the setting', () => {
    expect(loadModelSpec({ ANTHROPIC_API_KEY: 'sk-ant', OPENAI_API_KEY: KEY }, { provider: 'openai', model: 'gpt-x' })).toMatchObject({ kind: 'openai', model: 'gpt-x' });
    expect(loadModelSpec({ ANTHROPIC_API_KEY: 'sk-ant', AUTOTEAM_PROVIDER: 'offline' }).kind).toBe('offline');
    expect(loadModelSpec({ ANTHROPIC_API_KEY: 'sk-ant' }, { model: 'claude-x' })).toMatchObject({ kind: 'anthropic', model: 'claude-x' });
    expect(() => loadModelSpec({}, { provider: 'gemini' })).toThrow("--provider must be one of anthropic, openai, offline, got 'gemini'");
    expect(() => loadModelSpec({ AUTOTEAM_PROVIDER: 'openai' })).toThrow('AUTOTEAM_PROVIDER openai needs OPENAI_API_KEY, or OPENAI_BASE_URL for a local server');
    expect(() => loadModelSpec({}, { provider: 'anthropic' })).toThrow('--provider anthropic needs ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN');
    expect(() => loadModelSpec({ OPENAI_BASE_URL: 'ftp://x' })).toThrow("OPENAI_BASE_URL must be http(s), got 'ftp:'");
    expect(() => loadModelSpec({ OPENAI_BASE_URL: 'http://me:pw@x/v1' })).toThrow('must not contain user:password@');
  });
});

describe('autoteam on an OpenAI-compatible server', () => {
  it('run --provider openai: a rejected key stops the run at once with one line and exit 2, the key never shown', async () => {
    const { runCli, tempBoard: board, describeRun } = await import('../helpers/pipeline-cli.js');
    const api = await server(Array.from({ length: 8 }, () => error(401, `Incorrect API key provided: ${KEY}`)));
    const dir = board('autoteam-openai-');
    try {
      const run = await runCli(['run', '--auto', '--provider', 'openai', '--model', 'local-model', '--dir', dir, 'Write a Python script that organizes my Downloads folder by file type.'], {
        cwd: dir,
        env: { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: `${api.url}/v1` },
      });
      expect(run.code, describeRun(run)).toBe(2);
      expect(run.stdout).toMatch(/^autoteam run — local-model via 127\.0\.0\.1:\d+/m);
      expect(`${run.stdout}${run.stderr}`).toMatch(/OPENAI_API_KEY was rejected by http:\/\/127\.0\.0\.1:\d+\/v1 \(401 invalid_request_error: /);
      expect(`${run.stdout}${run.stderr}`).not.toContain(KEY);
      expect(api.requests[0]!.body.model).toBe('local-model');
      const bad = await runCli(['run', '--provider', 'gemini', '--dir', dir, 'x'], { cwd: dir });
      expect(bad.code).toBe(2);
      expect(bad.stderr.trim()).toBe("autoteam: --provider must be one of anthropic, openai, offline, got 'gemini'");
    } finally {
      removeBoard(dir);
    }
  });
});
