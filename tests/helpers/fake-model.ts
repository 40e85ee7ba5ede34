/**
 * A scripted fake behind `ModelClient` (after openai-agents-js `testing/scriptedModel`): each call
 * consumes the next step, every request is recorded (a deep copy, since the loop keeps appending to
 * its conversation), a call past the end of the script throws, and `assertDone()` fails when steps
 * were left unused.
 *
 * ```ts
 * const model = new FakeModel([
 *   reply(toolUse('bash', { command: 'ls' })),
 *   (call) => reply(text(`you sent ${call.messages.length} messages`)),
 * ]);
 * …
 * model.assertDone();
 * ```
 *
 * In a worker thread or child process (functions cannot cross threads) load it with the ModelSpec
 * `{ kind: 'module', path: FAKE_MODEL_PATH, options: { script: 'hang' } }`: `createModel(options)`
 * picks one of the canned behaviours in `FakeModelOptions`.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type {
  AgentContext,
  AssistantBlock,
  ModelClient,
  ModelMessage,
  ModelRequest,
  ModelResponse,
  TextBlock,
  ToolUseBlock,
  Usage,
} from '../../src/core/model/types.js';

/** This module for a `{ kind: 'module' }` spec: as JavaScript when vitest.config.ts compiled it (a worker thread then needs no tsx). */
export const FAKE_MODEL_PATH = process.env.AUTOTEAM_TEST_FAKE_MODEL ?? fileURLToPath(import.meta.url);

/** A request as the model saw it at call time. */
export interface RecordedCall {
  /** 0-based position among all calls to this model. */
  index: number;
  system: string;
  messages: ModelMessage[];
  /** Names of the tools offered. */
  tools: string[];
  maxTokens?: number;
  agent?: AgentContext;
}

/** What a step answers: a full response, assistant blocks, or plain text. */
export type StepResult = ModelResponse | AssistantBlock[] | string;
export type Step = StepResult | ((call: RecordedCall, request: ModelRequest) => StepResult | Promise<StepResult>);

export class UnexpectedModelCall extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

export const FAKE_USAGE: Usage = { inputTokens: 50, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0 };

export function text(value: string): TextBlock {
  return { type: 'text', text: value };
}

export function toolUse(name: string, input: unknown, id = `toolu_fake_${randomUUID().slice(0, 8)}`): ToolUseBlock {
  return { type: 'tool_use', id, name, input };
}

/** A response with these blocks; stopReason follows from whether a tool is used. */
export function reply(...blocks: AssistantBlock[]): ModelResponse {
  return respond(blocks);
}

function respond(blocks: AssistantBlock[], usage: Usage = FAKE_USAGE): ModelResponse {
  return {
    content: blocks,
    stopReason: blocks.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn',
    usage: { ...usage },
    model: 'fake-model',
  };
}

function normalize(result: StepResult): ModelResponse {
  if (typeof result === 'string') return respond([text(result)]);
  if (Array.isArray(result)) return respond(result);
  return { ...result, usage: { ...FAKE_USAGE, ...result.usage } };
}

export function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new Error(typeof reason === 'string' ? reason : 'aborted');
}

/** Resolves never; rejects when `signal` aborts (what a real model call does when cancelled). */
export function hangUntilAborted(signal: AbortSignal | undefined): Promise<never> {
  return new Promise((_resolve, reject) => {
    if (!signal) return;
    if (signal.aborted) reject(abortError(signal));
    else signal.addEventListener('abort', () => reject(abortError(signal)), { once: true });
  });
}

/** Text of the last user message, tool results included (what the model reacts to). */
export function lastUserText(messages: readonly ModelMessage[]): string {
  const last = [...messages].reverse().find((message) => message.role === 'user');
  if (!last) return '';
  if (typeof last.content === 'string') return last.content;
  return last.content
    .map((block) => (block.type === 'text' ? block.text : block.type === 'tool_result' ? block.content : ''))
    .join('\n');
}

export interface FakeModelConfig {
  id?: string;
  /** Called with every request as it is recorded (e.g. to write it to a file). */
  onCall?: (call: RecordedCall) => void;
}

export class FakeModel implements ModelClient {
  readonly id: string;
  readonly label = 'fake model';
  readonly requests: RecordedCall[] = [];
  /** Unexpected calls and failing steps, kept even when the caller swallows the exception. */
  readonly errors: Error[] = [];
  private used = 0;

  constructor(
    private readonly steps: readonly Step[],
    private readonly config: FakeModelConfig = {},
  ) {
    this.id = config.id ?? 'fake-model';
  }

  async create(request: ModelRequest): Promise<ModelResponse> {
    const call = record(request, this.requests.length);
    this.requests.push(call);
    this.config.onCall?.(call);
    if (request.signal?.aborted) throw abortError(request.signal);
    const step = this.steps[this.used];
    if (step === undefined) {
      const error = new UnexpectedModelCall(
        `FakeModel: unexpected call #${call.index + 1}; the script has ${this.steps.length} step(s). ` +
          `Agent ${JSON.stringify(call.agent ?? null)}, last user message: ${JSON.stringify(lastUserText(call.messages).slice(0, 300))}`,
      );
      this.errors.push(error);
      throw error;
    }
    this.used++;
    try {
      return normalize(typeof step === 'function' ? await step(call, request) : step);
    } catch (error) {
      if (!request.signal?.aborted) this.errors.push(error as Error);
      throw error;
    }
  }

  /** Steps not used yet. */
  get remaining(): number {
    return this.steps.length - this.used;
  }

  /** Throws if a call was unexpected or failed, or if any step was never used. */
  assertDone(): void {
    if (this.errors.length > 0) throw this.errors[0]!;
    if (this.used < this.steps.length) {
      throw new Error(`FakeModel: ${this.steps.length - this.used} of ${this.steps.length} step(s) never used (${this.used} calls made)`);
    }
  }

  /** The calls made for real work, without compaction requests. */
  workCalls(): RecordedCall[] {
    return this.requests.filter((call) => call.agent?.purpose !== 'compaction');
  }
}

function record(request: ModelRequest, index: number): RecordedCall {
  return {
    index,
    system: request.system,
    messages: structuredClone(request.messages),
    tools: request.tools.map((tool) => tool.name),
    ...(request.maxTokens !== undefined ? { maxTokens: request.maxTokens } : {}),
    ...(request.agent ? { agent: { ...request.agent } } : {}),
  };
}

// ---- Canned behaviours for other threads and processes (options are plain data). ----

export type FakeScript =
  /** Every call waits until it is aborted: a model that never answers. */
  | { script: 'hang' }
  /** The model is never made: the thread stays in its start-up (as one loading slowly on a busy machine). */
  | { script: 'never-starts' }
  /** The first call ends the thread (or process) with `process.exit(code)`. */
  | { script: 'exit'; code: number }
  /** The first call throws `message` from a timer callback, outside the loop's try/catch, and hangs. */
  | { script: 'throw-outside-loop'; message: string }
  /**
   * Works a task one `bash true` at a time, each call waiting until `waitForFile` exists (a model
   * that is slow to answer); answers a shutdown request with `shutdown_response` approve.
   */
  | { script: 'work-until-shutdown'; waitForFile: string }
  /** These responses in order; a call past the end throws UnexpectedModelCall. */
  | { script: 'steps'; steps: Array<AssistantBlock[] | string> };

export type FakeModelOptions = FakeScript & {
  /** Append every request to this file as one JSON line (how a test sees a worker's requests). */
  recordTo?: string;
};

/** The ModelSpec `module` factory: `{ kind: 'module', path: FAKE_MODEL_PATH, options }`. */
export function createModel(options: FakeModelOptions): ModelClient | Promise<ModelClient> {
  if (options.script === 'never-starts') return new Promise<ModelClient>(() => undefined);
  const onCall = options.recordTo
    ? (call: RecordedCall) => {
        fs.mkdirSync(path.dirname(options.recordTo!), { recursive: true });
        fs.appendFileSync(options.recordTo!, `${JSON.stringify(call)}\n`);
      }
    : undefined;
  const config: FakeModelConfig = { id: `fake-${options.script}`, ...(onCall ? { onCall } : {}) };
  switch (options.script) {
    case 'hang':
      return new FakeModel(
        Array.from({ length: 1000 }, () => (_call: RecordedCall, request: ModelRequest) => hangUntilAborted(request.signal)),
        config,
      );
    case 'exit':
      return new FakeModel(
        [
          () => {
            process.exit(options.code);
          },
        ],
        config,
      );
    case 'throw-outside-loop':
      return new FakeModel(
        [
          (_call, request) => {
            setImmediate(() => {
              throw new Error(options.message);
            });
            return hangUntilAborted(request.signal);
          },
        ],
        config,
      );
    case 'work-until-shutdown':
      return new FakeModel(
        Array.from({ length: 1000 }, () => async (call: RecordedCall, request: ModelRequest) => {
          const asked = /shut down \(request_id: ([A-Za-z0-9_-]+)\)/.exec(lastUserText(call.messages));
          if (asked) {
            return [
              text('Stopping as asked.'),
              toolUse('shutdown_response', { request_id: asked[1], approve: true, reason: 'approved by the model' }),
            ];
          }
          await waitForFile(options.waitForFile, request.signal);
          return [text('Still working.'), toolUse('bash', { command: 'true' })];
        }),
        config,
      );
    case 'steps':
      return new FakeModel(options.steps, config);
    default:
      throw new Error(`fake-model: unknown script ${JSON.stringify((options as { script?: unknown }).script)}`);
  }
}

/** Resolves once `file` exists; rejects when `signal` aborts. */
async function waitForFile(file: string, signal: AbortSignal | undefined): Promise<void> {
  while (!fs.existsSync(file)) {
    if (signal?.aborted) throw abortError(signal);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
