/**
 * Worker-thread entry (through ts-worker.mjs): makes a provider's model client against the loopback
 * server in `workerData.baseURL`, warms it, then sends one request. Reports whether this thread had
 * loaded Node's fetch (undici) before the warm-up, after it, and what the request answered.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { AnthropicModel } from '../../src/core/model/providers/anthropic/client.js';
import { OpenAIModel } from '../../src/core/model/providers/openai/client.js';
import type { ModelClient } from '../../src/core/model/types.js';

const { provider, baseURL } = workerData as { provider: 'anthropic' | 'openai'; baseURL: string };
// Node's list of the internal modules this thread loaded (`NativeModule internal/deps/undici/undici`).
const fetchLoaded = () => (process as unknown as { moduleLoadList: string[] }).moduleLoadList.some((name) => name.includes('undici'));

const model: ModelClient = provider === 'anthropic' ? new AnthropicModel({ apiKey: 'sk-warm-test-key', baseURL, maxRetries: 0 }) : new OpenAIModel({ model: 'm', apiKey: 'sk-warm-test-key', baseURL, maxRetries: 0 });
const beforeWarm = fetchLoaded();
await model.warm!();
const afterWarm = fetchLoaded();
const response = await model.create({ system: 's', messages: [{ role: 'user', content: 'hello' }], tools: [] });
parentPort!.postMessage({ beforeWarm, afterWarm, text: response.content.map((block) => (block.type === 'text' ? block.text : '')).join('') });
