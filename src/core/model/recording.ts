import fs from 'node:fs';
import path from 'node:path';
import { ModelError } from '../errors.js';
import { redact, secretValues } from '../trace/redact.js';
import type { ModelClient, ModelRequest, ModelResponse } from './types.js';

/**
 * Record and replay of a session's model calls. Each call is one file, named by the role that asked
 * (not the teammate: which of two engineers claims a task is a race), for which task, for what, and
 * the how-many-th such call it was: `<role>.task-<id>.<purpose>.<turn>.json` (`task-none` outside a
 * task). Keys do not depend on the request's text, so a prompt edit replays the same answers; a call
 * the recording does not hold, or one about a different task than the recorded call, fails loudly.
 */

export interface RecordedCall {
  key: string;
  request: Omit<ModelRequest, 'signal'>;
  response: ModelResponse;
}

/** Counts calls per (agent, task, purpose) in this thread, to number them. */
class Turns {
  private readonly counts = new Map<string, number>();

  next(request: ModelRequest): string {
    const agent = (request.agent?.role ?? request.agent?.name ?? 'anonymous').replace(/[^A-Za-z0-9_-]/g, '_');
    const task = request.agent?.task ?? null;
    const purpose = request.agent?.purpose ?? 'work';
    const base = `${agent}.task-${task ?? 'none'}.${purpose}`;
    const turn = (this.counts.get(base) ?? 0) + 1;
    this.counts.set(base, turn);
    return `${base}.${String(turn).padStart(3, '0')}`;
  }
}

/** Wraps a real model: every request and response goes to `<dir>/<key>.json`, secrets redacted. */
export class RecordingModel implements ModelClient {
  readonly id: string;
  readonly label: string;
  readonly provider: string | undefined;
  private readonly turns = new Turns();
  private readonly secrets = secretValues();

  constructor(
    private readonly inner: ModelClient,
    private readonly dir: string,
  ) {
    this.id = inner.id;
    this.provider = inner.provider;
    this.label = `${inner.label} (recording to ${dir})`;
    fs.mkdirSync(dir, { recursive: true });
  }

  async create(request: ModelRequest): Promise<ModelResponse> {
    const key = this.turns.next(request);
    const response = await this.inner.create(request);
    const { signal: _signal, handoff: _handoff, ...kept } = request;
    const call: RecordedCall = { key, request: kept, response };
    fs.writeFileSync(path.join(this.dir, `${key}.json`), redact(`${JSON.stringify(call, null, 2)}\n`, this.secrets));
    return response;
  }
}

/** Serves a recording's responses in place of a provider. */
export class ReplayModel implements ModelClient {
  readonly id: string;
  readonly label: string;
  readonly provider = 'replay';
  private readonly turns = new Turns();

  constructor(private readonly dir: string) {
    if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) {
      throw new ModelError(`--replay ${dir}: no such folder`, 'CONFIG_ERROR');
    }
    const first = fs.readdirSync(dir).find((name) => name.endsWith('.json'));
    const model = first ? (JSON.parse(fs.readFileSync(path.join(dir, first), 'utf8')) as RecordedCall).response.model : undefined;
    this.id = model ?? 'replay';
    this.label = `replay of ${dir}`;
  }

  async create(request: ModelRequest): Promise<ModelResponse> {
    const key = this.turns.next(request);
    const file = path.join(this.dir, `${key}.json`);
    if (!fs.existsSync(file)) {
      throw new ModelError(`the recording in ${this.dir} holds no call ${key}: the run asked something it does not hold (re-record it)`, 'REPLAY_MISSING');
    }
    request.signal?.throwIfAborted();
    const recorded = JSON.parse(fs.readFileSync(file, 'utf8')) as RecordedCall;
    const was = taskOf(recorded.request);
    const now = taskOf(request);
    if (was !== now) {
      throw new ModelError(`the run's call ${key} is about another task than the recording's (recorded: '${clip(was)}'; now: '${clip(now)}'): replay the run that was recorded`, 'REPLAY_MISSING');
    }
    return recorded.response;
  }
}

/** What a call is about: its task statement (or, outside a task, its first user message). */
function taskOf(request: Pick<ModelRequest, 'messages'>): string {
  const texts = request.messages.flatMap((message) => (message.role === 'user' ? (typeof message.content === 'string' ? [message.content] : message.content.flatMap((b) => (b.type === 'text' ? [b.text] : []))) : []));
  const task = texts.find((text) => text.startsWith('Task #')) ?? texts[0] ?? '';
  // The task statement up to its handoff: the handoff is built from earlier (replayed) answers.
  return task.split('\n<handoff>')[0]!.trim();
}

function clip(text: string): string {
  const line = text.replace(/\s+/g, ' ');
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}
