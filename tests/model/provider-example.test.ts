/**
 * The worked example of docs/ARCHITECTURE.md "Adding a provider": a provider in one folder
 * (tests/fixtures/providers/ollama/), put in a registry value, chosen from an environment object,
 * its settings checked, and a short exchange against a loopback server that speaks Ollama's chat API.
 * The doc shows these very files: the last test fails when they drift apart.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { loadModelSpec } from '../../src/core/model/config.js';
import { costWith, createModel, describeModel } from '../../src/core/model/factory.js';
import { priceTable } from '../../src/core/model/pricing.js';
import { anthropicProvider } from '../../src/core/model/providers/anthropic/index.js';
import { offlineProvider } from '../../src/core/model/providers/offline/index.js';
import { openAIProvider } from '../../src/core/model/providers/openai/index.js';
import { providerRegistry } from '../../src/core/model/registry.js';
import { MessagesServer, ok } from '../helpers/messages-server.js';
import { ollamaProvider } from '../fixtures/providers/ollama/index.js';

const registry = providerRegistry([anthropicProvider, openAIProvider, ollamaProvider, offlineProvider]);

const servers: MessagesServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

describe('adding a provider: the ollama example', () => {
  it('is chosen from the environment in registry order, and named by --provider', () => {
    expect(loadModelSpec({ OLLAMA_HOST: 'http://127.0.0.1:11434' }, {}, registry)).toEqual({ kind: 'ollama', host: 'http://127.0.0.1:11434', model: 'llama3.2' });
    expect(loadModelSpec({ OLLAMA_HOST: 'http://h:1', MODEL_ID: 'qwen3' }, { model: 'phi4' }, registry)).toMatchObject({ kind: 'ollama', model: 'phi4' });
    // Ahead of it in the list, a configured Anthropic key wins; with nothing set, the offline model names it too.
    expect(loadModelSpec({ OLLAMA_HOST: 'http://h:1', ANTHROPIC_API_KEY: 'sk-ant-0123456789' }, {}, registry).kind).toBe('anthropic');
    expect(loadModelSpec({}, {}, registry)).toEqual({ kind: 'offline', reason: 'no ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, OPENAI_API_KEY, OPENAI_BASE_URL or OLLAMA_HOST is set' });
    expect(() => loadModelSpec({}, { provider: 'ollama' }, registry)).toThrow('--provider ollama needs OLLAMA_HOST');
    expect(() => loadModelSpec({}, { provider: 'gemini' }, registry)).toThrow("--provider must be one of anthropic, openai, ollama, offline, got 'gemini'");
    expect(() => loadModelSpec({ OLLAMA_HOST: 'ftp://h' }, {}, registry)).toThrow("OLLAMA_HOST must be an http(s) URL, got 'ftp://h'");
    // The built-in registry knows nothing of it.
    expect(loadModelSpec({ OLLAMA_HOST: 'http://h:1' }).kind).toBe('offline');
  });

  it('refuses bad settings with an error that names the field', async () => {
    await expect(createModel({ kind: 'ollama', host: 'not a url', model: 'llama3.2' }, registry)).rejects.toThrow('ollama settings: host: an http(s) URL');
    await expect(createModel({ kind: 'ollama', host: 'http://h:1' }, registry)).rejects.toThrow(/^ollama settings: model: /);
    await expect(createModel({ kind: 'ollama', host: 'http://h:1', model: 'm', port: 1 }, registry)).rejects.toThrow(/ollama settings: .*port/);
    await expect(createModel({ kind: 'ollama', host: 'http://h:1', model: 'm' })).rejects.toThrow("unknown model provider 'ollama' (providers: anthropic, openai, offline)");
  });

  it('holds a short exchange with a server that speaks its API', async () => {
    const server = await MessagesServer.start(
      [
        (request) => ok({ message: { role: 'assistant', content: `hello, ${request.body.messages.at(-1).content}` }, prompt_eval_count: 12, eval_count: 3 }),
        (request) => ok({ message: { role: 'assistant', content: `you said ${request.body.messages.length - 1} things` }, prompt_eval_count: 20, eval_count: 4 }),
      ],
      { path: '/api/chat' },
    );
    servers.push(server);
    const spec = loadModelSpec({ OLLAMA_HOST: server.url }, {}, registry);
    const model = await createModel(spec, registry);
    expect(describeModel(spec, true, registry)).toBe(`llama3.2 via ${new URL(server.url).host}`);

    const first = await model.create({ system: 'Be brief.', messages: [{ role: 'user', content: 'Ada' }], tools: [] });
    expect(first.content).toEqual([{ type: 'text', text: 'hello, Ada' }]);
    expect(first.usage).toEqual({ inputTokens: 12, outputTokens: 3, cacheReadTokens: 0, cacheWriteTokens: 0 });
    const second = await model.create({
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Ada' }, { role: 'assistant', content: first.content }, { role: 'user', content: 'Bye.' }],
      tools: [],
    });
    expect(second.content).toEqual([{ type: 'text', text: 'you said 3 things' }]);
    expect(server.requests[1]!.body).toEqual({
      model: 'llama3.2',
      stream: false,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Ada' },
        { role: 'assistant', content: 'hello, Ada' },
        { role: 'user', content: 'Bye.' },
      ],
    });
    server.assertDone();
    // Priced only when a price table lists it.
    expect(costWith(spec, first.usage, priceTable(), registry)).toBeNull();
    expect(costWith(spec, { inputTokens: 1_000_000, outputTokens: 0 }, priceTable({ llama: { input: 0.5, output: 1, cacheRead: 0 } }), registry)).toBeCloseTo(0.5, 6);
  });

  it('is the code docs/ARCHITECTURE.md shows under "Adding a provider"', () => {
    const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
    const doc = fs.readFileSync(path.join(root, 'docs', 'ARCHITECTURE.md'), 'utf8');
    const start = doc.indexOf('### Adding a provider');
    expect(start).toBeGreaterThan(0);
    const section = doc.slice(start, doc.indexOf('\n## ', start) < 0 ? undefined : doc.indexOf('\n## ', start));
    const folder = 'tests/fixtures/providers/ollama';
    const files = fs.readdirSync(path.join(root, folder)).sort();
    expect(files).toEqual(['client.ts', 'convert.ts', 'index.ts']);
    for (const file of files) {
      const shown = section.match(new RegExp('`' + `${folder}/${file}`.replace(/[.]/g, '\\.') + '`[^\\n]*\\n+```ts\\n([\\s\\S]*?)```'));
      expect(shown, `${folder}/${file} shown in the doc`).not.toBeNull();
      expect(shown![1]).toBe(fs.readFileSync(path.join(root, folder, file), 'utf8'));
    }
  });
});
