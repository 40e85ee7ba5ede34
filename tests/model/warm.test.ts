import { Worker } from 'node:worker_threads';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { RecordingModel } from '../../src/core/model/recording.js';
import type { ModelClient } from '../../src/core/model/types.js';
import { MessagesServer, ok, textMessage } from '../helpers/messages-server.js';
import { tempDir } from '../helpers/temp-dirs.js';

const servers: MessagesServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** Runs tests/helpers/model-warm-thread.ts in a fresh worker thread: Node loads fetch once per thread. */
async function warmInThread(provider: 'anthropic' | 'openai', baseURL: string) {
  const worker = new Worker(new URL('../helpers/ts-worker.mjs', import.meta.url), { workerData: { entry: new URL('../helpers/model-warm-thread.ts', import.meta.url).href, provider, baseURL } });
  const [error, message] = await Promise.race([once(worker, 'error').then(([e]) => [e, null]), once(worker, 'message').then(([m]) => [null, m])]);
  await worker.terminate();
  if (error) throw error;
  return message as { beforeWarm: boolean; afterWarm: boolean; text: string };
}

describe('a model client warmed while its teammate is idle', () => {
  it('Anthropic: loads the thread’s fetch without sending a request, and its first request then works', async () => {
    const server = await MessagesServer.start([ok(textMessage('hi'))]);
    servers.push(server);
    const seen = await warmInThread('anthropic', server.url);
    expect(seen).toEqual({ beforeWarm: false, afterWarm: true, text: 'hi' });
    // One request: the create. The warm-up sent none.
    expect(server.requests).toHaveLength(1);
    server.assertDone();
  });

  it('OpenAI-compatible: the same', async () => {
    const completion = { id: 'c', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1 } };
    const server = await MessagesServer.start([ok(completion)], { path: '/v1/chat/completions' });
    servers.push(server);
    const seen = await warmInThread('openai', `${server.url}/v1`);
    expect(seen).toEqual({ beforeWarm: false, afterWarm: true, text: 'hi' });
    expect(server.requests).toHaveLength(1);
    server.assertDone();
  });

  it('a recording warms the model it records', async () => {
    let warmed = 0;
    const inner: ModelClient = { id: 'm', label: 'm', create: () => Promise.reject(new Error('not called')), warm: async () => void warmed++ };
    await new RecordingModel(inner, tempDir('warm-record-')).warm();
    expect(warmed).toBe(1);
  });
});
