import fs from 'node:fs';
import path from 'node:path';
import { ModelError } from '../errors.js';
import { redact, secretValues } from '../trace/redact.js';
import type { ModelClient, ModelRequest, ModelResponse } from './types.js';

/**
 * Record and replay of a session's model calls. Each call is one file, named by who asked, for which
 * task, for what, and the how-many-th such call it was: `<agent>.task-<id>.<purpose>.<turn>.json`
 * (`task-none` outside a task). Keys do not depend on the request's text, so a prompt edit replays
 * the same answers; a call the recording does not hold fails loudly, naming it.
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
    const agent = (request.agent?.name ?? 'anonymous').replace(/[^A-Za-z0-9_-]/g, '_');
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
  private readonly turns = new Turns();
  private readonly secrets = secretValues();

  constructor(
    private readonly inner: ModelClient,
    private readonly dir: string,
  ) {
    this.id = inner.id;
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
    return (JSON.parse(fs.readFileSync(file, 'utf8')) as RecordedCall).response;
  }
}
