import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, FATAL_MODEL_CODES, ModelError } from '../../src/core/errors.js';
import {
  AnthropicModel,
  DEFAULT_MODEL_ID,
  loadModelConfig,
  type ModelRequest,
  type ToolSpec,
} from '../../src/core/model/index.js';
import {
  MessagesServer,
  type ScriptStep,
  errorReply,
  hang,
  modelNotFound,
  ok,
  overloaded,
  textMessage,
  toolUseMessage,
  unauthorized,
} from '../helpers/messages-server.js';

const KEY = 'sk-ant-test-0123456789abcdef';

const TOOLS: ToolSpec[] = [
  {
    name: 'read_file',
    description: 'Read a file from the workspace',
    input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
  {
    name: 'write_file',
    description: 'Write a file in the workspace',
    input_schema: {
      type: 'object',
      properties: { path: { type: 'string' }, content: { type: 'string' } },
      required: ['path', 'content'],
    },
  },
];

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    system: 'You are the engineer.',
    messages: [{ role: 'user', content: 'Write organize.py' }],
    tools: TOOLS,
    ...overrides,
  };
}

let server: MessagesServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(...steps: ScriptStep[]): Promise<MessagesServer> {
  server = await MessagesServer.start(steps);
  return server;
}

async function failure(promise: Promise<unknown>): Promise<ModelError> {
  const error = await promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ModelError);
  return error as ModelError;
}

/** A port nothing listens on: bind one, then close it. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

describe('AnthropicModel against a loopback Messages API', () => {
  it('round-trips a tool_use turn: cached system and tools, messages, content and usage', async () => {
    const s = await serve(
      ok(
        toolUseMessage(
          'write_file',
          { path: 'organize.py', content: 'print(1)\n' },
          {
            toolUseId: 'toolu_01',
            text: 'Writing the file.',
            model: 'claude-sonnet-5-5-20261001',
            usage: { inputTokens: 120, outputTokens: 40, cacheReadTokens: 900, cacheWriteTokens: 300 },
          },
        ),
      ),
    );
    const model = new AnthropicModel({ apiKey: KEY, baseURL: s.url, model: 'claude-sonnet-5-5' });

    const response = await model.create(
      request({
        maxTokens: 1024,
        messages: [
          { role: 'user', content: 'Write organize.py' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_00', name: 'read_file', input: { path: 'x' } }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_00', content: 'no such file', is_error: true }] },
        ],
      }),
    );

    expect(response).toEqual({
      content: [
        { type: 'text', text: 'Writing the file.' },
        { type: 'tool_use', id: 'toolu_01', name: 'write_file', input: { path: 'organize.py', content: 'print(1)\n' } },
      ],
      stopReason: 'tool_use',
      usage: { inputTokens: 120, outputTokens: 40, cacheReadTokens: 900, cacheWriteTokens: 300 },
      model: 'claude-sonnet-5-5-20261001',
    });
    expect(model.id).toBe('claude-sonnet-5-5');
    expect(model.label).toBe('claude-sonnet-5-5');

    expect(s.requests).toHaveLength(1);
    const sent = s.requests[0]!;
    expect(sent.method).toBe('POST');
    expect(sent.path).toBe('/v1/messages');
    expect(sent.body).toEqual({
      model: 'claude-sonnet-5-5',
      max_tokens: 1024,
      system: [{ type: 'text', text: 'You are the engineer.', cache_control: { type: 'ephemeral' } }],
      tools: [
        { name: 'read_file', description: TOOLS[0]!.description, input_schema: TOOLS[0]!.input_schema },
        {
          name: 'write_file',
          description: TOOLS[1]!.description,
          input_schema: TOOLS[1]!.input_schema,
          cache_control: { type: 'ephemeral' },
        },
      ],
      messages: [
        { role: 'user', content: 'Write organize.py' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_00', name: 'read_file', input: { path: 'x' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_00', content: 'no such file', is_error: true }] },
      ],
    });
    expect(sent.headers['anthropic-version']).toBe('2026-10-21');
    s.assertDone();
  });

  it('sends the API key only in x-api-key', async () => {
    const s = await serve(ok(textMessage('hi')));
    await new AnthropicModel({ apiKey: KEY, baseURL: s.url }).create(request());

    const sent = s.requests[0]!;
    expect(sent.headers['x-api-key']).toBe(KEY);
    expect(sent.headers.authorization).toBeUndefined();
    const carrying = Object.entries(sent.headers).filter(([, value]) => value.includes(KEY));
    expect(carrying.map(([name]) => name)).toEqual(['x-api-key']);
    expect(sent.rawBody).not.toContain(KEY);
  });

  it('sends ANTHROPIC_AUTH_TOKEN as Authorization: Bearer', async () => {
    const s = await serve(ok(textMessage('hi')));
    await new AnthropicModel({ authToken: 'tok-vendor-42', baseURL: s.url }).create(request());

    expect(s.requests[0]!.headers.authorization).toBe('Bearer tok-vendor-42');
    expect(s.requests[0]!.headers['x-api-key']).toBeUndefined();
  });

  it('leaves out an empty system prompt and an empty tool list, and defaults max_tokens', async () => {
    const s = await serve(ok(textMessage('done')));
    const response = await new AnthropicModel({ apiKey: KEY, baseURL: s.url }).create(request({ system: '', tools: [] }));

    expect(response.content).toEqual([{ type: 'text', text: 'done' }]);
    expect(response.stopReason).toBe('end_turn');
    expect(s.requests[0]!.body).not.toHaveProperty('system');
    expect(s.requests[0]!.body).not.toHaveProperty('tools');
    expect(s.requests[0]!.body.max_tokens).toBeGreaterThan(0);
    expect(s.requests[0]!.body.model).toBe(DEFAULT_MODEL_ID);
  });

  it('can override the anthropic-version header for vendors', async () => {
    const s = await serve(ok(textMessage('hi')));
    await new AnthropicModel({ apiKey: KEY, baseURL: s.url, anthropicVersion: '2023-06-01' }).create(request());
    expect(s.requests[0]!.headers['anthropic-version']).toBe('2023-06-01');
  });

  it('retries a 529 and then succeeds', async () => {
    const s = await serve(overloaded(), ok(textMessage('second time lucky')));
    const response = await new AnthropicModel({ apiKey: KEY, baseURL: s.url }).create(request());

    expect(response.content).toEqual([{ type: 'text', text: 'second time lucky' }]);
    expect(s.requests).toHaveLength(2);
    expect(s.requests[0]!.headers['x-stainless-retry-count']).toBe('0');
    expect(s.requests[1]!.headers['x-stainless-retry-count']).toBe('1');
    expect(s.requests[1]!.body).toEqual(s.requests[0]!.body);
    s.assertDone();
  });

  it('gives up after maxRetries with MODEL_ERROR naming the status', async () => {
    const s = await serve(overloaded(), overloaded());
    const error = await failure(new AnthropicModel({ apiKey: KEY, baseURL: s.url, maxRetries: 1 }).create(request()));

    expect(error.code).toBe('MODEL_ERROR');
    expect(error.message).toContain('529');
    expect(error.message).toContain('overloaded_error');
    expect(error.message).toContain('after 1 retries');
    expect(s.requests).toHaveLength(2);
  });

  it('fails a 429 that asks for more than a minute at once, saying the wait and carrying it for the task, instead of sleeping through it', async () => {
    const limited = () => ({ ...errorReply(429, 'rate_limit_error', 'Number of requests has exceeded your rate limit'), headers: { 'retry-after': '3600' } });
    const s = await serve(limited(), limited(), limited());
    const error = await failure(new AnthropicModel({ apiKey: KEY, baseURL: s.url }).create(request()));
    expect(error).toMatchObject({ code: 'MODEL_ERROR', retryAfterMs: 3_600_000 });
    expect(error.message).toMatch(/answered 429 rate_limit_error: Number of requests has exceeded your rate limit \(model '.+'\), and asks for no request for 60 min \(retry-after\)$/);
    expect(s.requests).toHaveLength(1);
  });

  it('sleeps through a retry-after of a minute or less, as the SDK does', async () => {
    const s = await serve({ ...errorReply(429, 'rate_limit_error', 'slow down'), headers: { 'retry-after-ms': '20' } }, ok(textMessage('after the wait')));
    const response = await new AnthropicModel({ apiKey: KEY, baseURL: s.url }).create(request());
    expect(response.content).toEqual([{ type: 'text', text: 'after the wait' }]);
    expect(s.requests).toHaveLength(2);
  });

  it('maps 401 to MODEL_AUTH with one line that names the variable and the URL but not the key', async () => {
    const s = await serve(unauthorized(`invalid x-api-key: ${KEY}`));
    const error = await failure(new AnthropicModel({ apiKey: KEY, baseURL: s.url }).create(request()));

    expect(error.code).toBe('MODEL_AUTH');
    expect(error.message).toMatch(/^ANTHROPIC_API_KEY was rejected by http:\/\/127\.0\.0\.1:\d+ \(401 /);
    expect(error.message).toContain('check the key');
    expect(error.message).not.toContain(KEY);
    expect(error.message).not.toContain('\n');
    expect(String(error.cause ?? '')).not.toContain(KEY);
    expect(s.requests).toHaveLength(1);
  });

  it('names ANTHROPIC_AUTH_TOKEN when a bearer token is rejected', async () => {
    const s = await serve(unauthorized('bad token'));
    const error = await failure(new AnthropicModel({ authToken: 'tok-secret-99', baseURL: s.url }).create(request()));

    expect(error.code).toBe('MODEL_AUTH');
    expect(error.message).toContain('ANTHROPIC_AUTH_TOKEN was rejected');
    expect(error.message).not.toContain('tok-secret-99');
  });

  it('maps a 404 for the model to MODEL_NOT_FOUND naming the model and MODEL_ID', async () => {
    const s = await serve(modelNotFound('claude-nope-1'));
    const error = await failure(new AnthropicModel({ apiKey: KEY, baseURL: s.url, model: 'claude-nope-1' }).create(request()));

    expect(error.code).toBe('MODEL_NOT_FOUND');
    expect(error.message).toContain("'claude-nope-1'");
    expect(error.message).toContain('MODEL_ID');
    expect(error.message).not.toContain('\n');
  });

  it('points at ANTHROPIC_BASE_URL for a 404 that is not about the model', async () => {
    const s = await serve(errorReply(404, 'not_found_error', 'Not Found'));
    const error = await failure(new AnthropicModel({ apiKey: KEY, baseURL: s.url }).create(request()));

    // No retry finds a path that is not there: a teammate stops on it, as on a refused connection.
    expect(error.code).toBe('MODEL_ENDPOINT');
    expect(FATAL_MODEL_CODES.has(error.code)).toBe(true);
    expect(error.message).toContain('ANTHROPIC_BASE_URL');
    expect(s.requests).toHaveLength(1);
  });

  it('maps an abort to MODEL_ABORTED and does not retry', async () => {
    const s = await serve(hang());
    const controller = new AbortController();
    const call = new AnthropicModel({ apiKey: KEY, baseURL: s.url }).create(request({ signal: controller.signal }));

    await s.waitForRequests(1);
    controller.abort();
    const error = await failure(call);

    expect(error.code).toBe('MODEL_ABORTED');
    expect(s.requests).toHaveLength(1);
    expect(s.errors).toEqual([]);
  });

  it('does not send anything when the signal is already aborted', async () => {
    const s = await serve();
    const error = await failure(
      new AnthropicModel({ apiKey: KEY, baseURL: s.url }).create(request({ signal: AbortSignal.abort() })),
    );
    expect(error.code).toBe('MODEL_ABORTED');
    expect(s.requests).toHaveLength(0);
  });

  it('maps a refused connection to MODEL_UNREACHABLE naming the base URL', async () => {
    const port = await closedPort();
    const baseURL = `http://127.0.0.1:${port}`;
    const error = await failure(new AnthropicModel({ apiKey: KEY, baseURL, maxRetries: 0 }).create(request()));

    expect(error.code).toBe('MODEL_UNREACHABLE');
    expect(error.message).toContain(baseURL);
    expect(error.message).toContain('ECONNREFUSED');
    expect(error.message).toContain('ANTHROPIC_BASE_URL');
  });

  it('maps a timeout to MODEL_TIMEOUT, which stops a teammate on the first call; once the endpoint has answered, a passing fault (MODEL_ERROR, retried)', async () => {
    const s = await serve(hang());
    const error = await failure(
      new AnthropicModel({ apiKey: KEY, baseURL: s.url, timeoutMs: 50, maxRetries: 0 }).create(request()),
    );
    expect(error.code).toBe('MODEL_TIMEOUT');
    expect(FATAL_MODEL_CODES.has(error.code)).toBe(true);
    expect(error.message).toContain('50 ms');
    const answered = await serve(ok(textMessage('hi')), hang());
    const model = new AnthropicModel({ apiKey: KEY, baseURL: answered.url, timeoutMs: 50, maxRetries: 0 });
    await model.create(request());
    const later = await failure(model.create(request()));
    expect(later.code).toBe('MODEL_ERROR');
    expect(later.message).toMatch(/^No answer from .* within 50 ms \(0 retries\)/);
  });

  it('reports a non-Messages answer as MODEL_BAD_RESPONSE', async () => {
    const s = await serve({ status: 200, body: '<html>welcome to the vendor portal</html>' });
    const error = await failure(new AnthropicModel({ apiKey: KEY, baseURL: s.url }).create(request()));
    expect(error.code).toBe('MODEL_BAD_RESPONSE');
    expect(error.message).toContain('ANTHROPIC_BASE_URL');
  });

  it('reports a body sent as JSON that is not JSON as MODEL_BAD_RESPONSE, which stops a teammate, once', async () => {
    const s = await serve({ status: 200, body: '{"id": "msg_1", "type": "mess', headers: { 'content-type': 'application/json' } });
    const error = await failure(new AnthropicModel({ apiKey: KEY, baseURL: s.url }).create(request()));
    expect(error.code).toBe('MODEL_BAD_RESPONSE');
    expect(FATAL_MODEL_CODES.has(error.code)).toBe(true);
    expect(error.message).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1\/messages answered with a body that is not JSON \(.+\): check ANTHROPIC_BASE_URL$/);
    expect(s.requests).toHaveLength(1);
  });

  it('maps a first request refused (400, 413) to MODEL_REFUSED, which fails its task at once; once answered, a passing fault', async () => {
    const s = await serve(errorReply(400, 'invalid_request_error', 'tools: unsupported'), errorReply(413, 'request_too_large', 'Request exceeds the maximum size'), ok(textMessage('hi')), errorReply(400, 'invalid_request_error', 'prompt is too long'));
    const error = await failure(new AnthropicModel({ apiKey: KEY, baseURL: s.url, model: 'claude-x' }).create(request()));
    expect(error.code).toBe('MODEL_REFUSED');
    expect(FATAL_MODEL_CODES.has(error.code)).toBe(false);
    expect(error.message).toBe(`Model API at ${s.url} refused the request for model 'claude-x' (400 invalid_request_error: tools: unsupported)`);
    expect(s.requests).toHaveLength(1);
    expect((await failure(new AnthropicModel({ apiKey: KEY, baseURL: s.url }).create(request()))).message).toContain('(413 request_too_large: Request exceeds the maximum size)');
    // A body that is no JSON (a proxy's words) is said too.
    const plain = await serve({ status: 400, body: 'tool use is not supported by this model', headers: { 'content-type': 'text/plain' } }, { status: 400, body: '' });
    expect((await failure(new AnthropicModel({ apiKey: KEY, baseURL: plain.url, model: 'm' }).create(request()))).message).toBe(`Model API at ${plain.url} refused the request for model 'm' (400: tool use is not supported by this model)`);
    expect((await failure(new AnthropicModel({ apiKey: KEY, baseURL: plain.url, model: 'm' }).create(request()))).message).toBe(`Model API at ${plain.url} refused the request for model 'm' (400)`);
    const model = new AnthropicModel({ apiKey: KEY, baseURL: s.url });
    await model.create(request());
    const later = await failure(model.create(request()));
    expect(later.code).toBe('MODEL_ERROR');
    expect(later.message).toContain('refused the request for model');
    expect(s.requests).toHaveLength(4);
  });

  it('takes a 404 or a body that is not JSON for a passing fault (MODEL_ERROR, retried) once the endpoint has answered as the API', async () => {
    const s = await serve(ok(textMessage('hi')), errorReply(404, 'not_found_error', 'Not Found'), { status: 200, body: '{"id": "msg_1", "type": "mess', headers: { 'content-type': 'application/json' } });
    const model = new AnthropicModel({ apiKey: KEY, baseURL: s.url });
    expect((await model.create(request())).content).toEqual([{ type: 'text', text: 'hi' }]);
    for (const said of [/does not exist \(404/, /answered with a body that is not JSON/]) {
      const error = await failure(model.create(request()));
      expect(error.code).toBe('MODEL_ERROR');
      expect(error.message).toMatch(said);
    }
  });

  it('refuses to construct without exactly one credential', () => {
    expect(() => new AnthropicModel({})).toThrow(ConfigError);
    expect(() => new AnthropicModel({ apiKey: 'a', authToken: 'b' })).toThrow(ConfigError);
  });

  it('refuses a base URL with user:password@, which fetch would quote in its error', () => {
    expect(() => new AnthropicModel({ apiKey: KEY, baseURL: 'http://user:pw-secret@127.0.0.1:9' })).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('pw-secret') }),
    );
    expect(() => loadModelConfig({ ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: 'http://u:p@h' })).toThrow(ConfigError);
  });
});

describe('MessagesServer', () => {
  it('answers an unexpected extra request with a loud 500 and records it', async () => {
    const s = await serve(ok(textMessage('only one')));
    const model = new AnthropicModel({ apiKey: KEY, baseURL: s.url });
    await model.create(request());
    const error = await failure(model.create(request()));

    expect(error.message).toContain('500');
    expect(error.message).toContain('no step left');
    expect(s.requests).toHaveLength(2); // x-should-retry: false keeps the SDK from retrying it
    expect(s.errors).toHaveLength(1);
    expect(() => s.assertDone()).toThrow(/no step left/);
  });

  it('passes the parsed request to a step function', async () => {
    const s = await serve((req) => ok(textMessage(`got ${req.body.messages.length} message(s)`)));
    const response = await new AnthropicModel({ apiKey: KEY, baseURL: s.url }).create(request());
    expect(response.content).toEqual([{ type: 'text', text: 'got 1 message(s)' }]);
    s.assertDone();
  });

  it('reports unused steps', async () => {
    const s = await serve(ok(textMessage('never asked')));
    expect(() => s.assertDone()).toThrow(/never requested/);
  });
});

describe('loadModelConfig', () => {
  it('is offline without a key or token', () => {
    expect(loadModelConfig({})).toMatchObject({ kind: 'offline' });
    expect(loadModelConfig({ ANTHROPIC_API_KEY: '  ', MODEL_ID: 'x' })).toMatchObject({ kind: 'offline' });
  });

  it('reads the API key with the default model', () => {
    expect(loadModelConfig({ ANTHROPIC_API_KEY: KEY })).toEqual({ kind: 'anthropic', apiKey: KEY, model: DEFAULT_MODEL_ID });
  });

  it('reads an auth token, base URL, model id, timeout and API version', () => {
    expect(
      loadModelConfig({
        ANTHROPIC_AUTH_TOKEN: 'tok',
        ANTHROPIC_BASE_URL: 'https://vendor.example/anthropic',
        MODEL_ID: 'vendor-model',
        ANTHROPIC_TIMEOUT_MS: '30000',
        ANTHROPIC_VERSION: '2023-06-01',
      }),
    ).toEqual({
      kind: 'anthropic',
      authToken: 'tok',
      baseURL: 'https://vendor.example/anthropic',
      model: 'vendor-model',
      timeoutMs: 30000,
      anthropicVersion: '2023-06-01',
    });
  });

  it('prefers the API key when both are set', () => {
    const config = loadModelConfig({ ANTHROPIC_API_KEY: KEY, ANTHROPIC_AUTH_TOKEN: 'tok' });
    expect(config).toMatchObject({ kind: 'anthropic', apiKey: KEY });
    expect(config).not.toHaveProperty('authToken');
  });

  it('rejects a bad base URL or timeout without echoing credentials', () => {
    expect(() => loadModelConfig({ ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: 'not a url' })).toThrow(ConfigError);
    expect(() => loadModelConfig({ ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: 'ftp://x' })).toThrow(/http/);
    expect(() => loadModelConfig({ ANTHROPIC_API_KEY: KEY, ANTHROPIC_TIMEOUT_MS: '2m' })).toThrow(/ANTHROPIC_TIMEOUT_MS/);
    expect(() => loadModelConfig({ ANTHROPIC_API_KEY: KEY, ANTHROPIC_TIMEOUT_MS: '0' })).toThrow(ConfigError);
    expect(() => loadModelConfig({ ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: `https://user:${KEY}@x y` })).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining(KEY) }),
    );
  });

  it('builds a working model from its result', async () => {
    const s = await serve(ok(textMessage('configured')));
    const config = loadModelConfig({ ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: s.url, MODEL_ID: 'm-1' });
    if (config.kind !== 'anthropic') throw new Error('expected an anthropic config');
    const response = await new AnthropicModel(config).create(request());
    expect(response.content).toEqual([{ type: 'text', text: 'configured' }]);
    expect(s.requests[0]!.body.model).toBe('m-1');
  });
});
