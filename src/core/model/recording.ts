import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { ModelError } from '../errors.js';
import { describeZodError } from '../board/schemas.js';
import { makeDir } from '../make-dir.js';
import { redact, secretValues } from '../trace/redact.js';
import type { ModelClient, ModelRequest, ModelResponse, OfflineContext, RequestContext } from './types.js';

/**
 * Record and replay of a session's model calls. Each call is one file, named by the role that asked
 * (not the teammate: which of two engineers claims a task is a race), for which task, for what, and
 * the how-many-th such call it was: `<role>.task-<id>.<purpose>.<turn>.json` (`task-none` outside a
 * task). Keys do not depend on the request's text, so a prompt edit replays the same answers; a call
 * the recording does not hold, or one about a different task than the recorded call, fails loudly.
 */

export interface RecordedCall {
  key: string;
  /** The request, with the offline context beside it (not the handoff: the text carries it) under `context`. */
  request: Omit<ModelRequest, 'signal'> & { context?: RequestContext };
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
    try {
      makeDir(dir);
    } catch (error) {
      throw new ModelError(`--record ${dir}: ${whyNotFolder(error)}`, 'CONFIG_ERROR');
    }
  }

  async warm(): Promise<void> {
    await this.inner.warm?.();
  }

  async create(request: ModelRequest, offline?: OfflineContext): Promise<ModelResponse> {
    const key = this.turns.next(request);
    const response = await this.inner.create(request, offline);
    const { signal: _signal, ...kept } = request;
    const { handoff: _handoff, ...context } = offline ?? {};
    const call: RecordedCall = { key, request: { ...kept, ...(Object.keys(context).length ? { context } : {}) }, response };
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
    const folder = folderProblem(dir);
    if (folder) throw new ModelError(`--replay ${dir}: ${folder}`, 'CONFIG_ERROR');
    const first = fs.readdirSync(dir).find((name) => name.endsWith('.json'));
    // The model the recording named, for the label; a file that does not read is said when its call is served.
    let model: string | undefined;
    try {
      model = first ? (JSON.parse(fs.readFileSync(path.join(dir, first), 'utf8')) as RecordedCall).response?.model : undefined;
    } catch {
      model = undefined;
    }
    this.id = model ?? 'replay';
    this.label = `replay of ${dir}`;
  }

  async create(request: ModelRequest, offline?: OfflineContext): Promise<ModelResponse> {
    const key = this.turns.next(request);
    const file = path.join(this.dir, `${key}.json`);
    if (!fs.existsSync(file)) {
      throw new ModelError(`the recording in ${this.dir} holds no call ${key}${whyMissing(recordedTaskIds(this.dir), request.agent?.task)}`, 'REPLAY_MISSING');
    }
    request.signal?.throwIfAborted();
    const recorded = readRecordedCall(file);
    // Compared the same way on both sides: by context when the recording has it, else by text.
    const fromContext = recorded.request.context !== undefined;
    const was = taskOf(recorded.request, fromContext);
    const now = taskOf({ messages: request.messages, ...(offline ? { context: offline } : {}) }, fromContext);
    if (was !== now) {
      const [recordedPart, nowPart] = differingPart(was, now);
      throw new ModelError(`the run's call ${key} is about another task than the recording's (recorded: '${clip(recordedPart)}'; now: '${clip(nowPart)}'): replay the run that was recorded`, 'REPLAY_MISSING');
    }
    return recorded.response;
  }
}

/**
 * Why a recording lacks a call, from its task: one before the recording's first task was numbered by
 * a board that already held tasks; one past its last, a run that went further than the recorded one
 * (another revision) or a board ahead of the recorded one; else a call the recorded run never made.
 */
function whyMissing(recorded: readonly number[], task: number | null | undefined): string {
  if (task == null || recorded.length === 0 || recorded.includes(task)) return ': the run asked something it does not hold (re-record it)';
  const held = `it holds calls for ${recorded.length === 1 ? `task #${recorded[0]}` : `tasks #${recorded[0]}–#${recorded.at(-1)}`}, not #${task}`;
  if (task < recorded[0]!) return `; ${held}: replay on a board that numbers the tasks as the recorded one did`;
  return `; ${held}: the run went further than the recorded one, or its board numbered the tasks from later on (replay on a board like the recorded one, an empty folder for a run recorded on one; or re-record it)`;
}

/** Why `dir` cannot hold a recording to replay: not there, or a file. */
function folderProblem(dir: string): string | null {
  if (!fs.existsSync(dir)) return 'no such folder';
  return fs.statSync(dir).isDirectory() ? null : 'is a file, not a folder of recorded calls';
}

/** The ids of the tasks a recording holds calls for, ascending. */
export function recordedTaskIds(dir: string): number[] {
  const ids = new Set<number>();
  for (const name of fs.readdirSync(dir)) {
    const id = /\.task-(\d+)\./.exec(name)?.[1];
    if (id) ids.add(Number(id));
  }
  return [...ids].sort((a, b) => a - b);
}

/**
 * Why a run that posts new tasks cannot replay `dir` on a board holding `tasks`, or null: a replay
 * finds each call by its task's number, and this board would number the run's first task otherwise
 * than the recorded board did (a replay in the folder it was recorded in, after the recorded run).
 */
export function replayBoardProblem(dir: string, tasks: ReadonlyArray<{ id: number }>): string | null {
  const folder = folderProblem(dir);
  if (folder) return `--replay ${dir}: ${folder}`;
  if (!fs.readdirSync(dir).some((name) => name.endsWith('.json'))) return `--replay ${dir}: the folder holds no recorded calls (a recording is made with --record <folder>)`;
  const [first] = recordedTaskIds(dir);
  const next = Math.max(0, ...tasks.map((task) => task.id)) + 1;
  if (first === undefined || first === next) return null;
  return `--replay ${dir}: the recording's first task is #${first}, and this board's next task would be #${next}: a replay finds each call by its task's number, so run it on a board that numbers the tasks as the recorded one did${first === 1 ? ' (an empty folder, with --dir)' : ''}`;
}

/** What a recorded call must hold to be served: its request's messages and a response's blocks and usage. */
const RecordedCallSchema = z.object({
  request: z.object({ messages: z.array(z.unknown()), context: z.record(z.string(), z.unknown()).optional() }).passthrough(),
  response: z.object({
    content: z.array(z.object({ type: z.string() }).passthrough()),
    stopReason: z.string(),
    usage: z.object({ inputTokens: z.number(), outputTokens: z.number() }).passthrough(),
  }).passthrough(),
});

/**
 * A recorded call, or a fatal error naming its file: one cut short or edited into another shape would
 * otherwise be a model error like any other, retried past — the run going on, unlike the recorded one.
 */
function readRecordedCall(file: string): RecordedCall {
  let json: unknown;
  try {
    json = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ModelError(`${file}: not a recorded call (${(error as Error).message}): re-record it`, 'REPLAY_MISSING');
  }
  const parsed = RecordedCallSchema.safeParse(json);
  if (!parsed.success) throw new ModelError(`${file}: not a recorded call (${describeZodError(parsed.error)}): re-record it`, 'REPLAY_MISSING');
  return json as RecordedCall;
}

/** The first line of `was` and `now` that differs (a task's heading, or its statement), to name. */
function differingPart(was: string, now: string): [string, string] {
  const a = was.split('\n');
  const b = now.split('\n');
  const at = a.findIndex((line, i) => line !== b[i]);
  const i = at < 0 ? a.length : at;
  return [a.slice(i).join(' ') || '(nothing)', b.slice(i).join(' ') || '(nothing)'];
}

/**
 * What a call is about: the task it works (from the request's context: its heading and its whole
 * statement, not only the heading, which cuts a long requirement short), or — in a recording made
 * before requests carried their context — the first user message up to its handoff.
 */
function taskOf(request: Pick<RecordedCall['request'], 'messages' | 'context'>, fromContext: boolean): string {
  const task = request.context?.task;
  if (fromContext) return task ? `#${task.id} ${task.subject}\n${task.description}` : '';
  const texts = request.messages.flatMap((message) => (message.role === 'user' ? (typeof message.content === 'string' ? [message.content] : message.content.flatMap((b) => (b.type === 'text' ? [b.text] : []))) : []));
  // Skip the identity block: the task statement is the first message after it.
  const first = texts.find((text) => !text.startsWith('<identity>')) ?? texts[0] ?? '';
  // The statement up to its handoff: the handoff is built from earlier (replayed) answers.
  return first.split('\n<handoff>')[0]!.trim();
}

function clip(text: string): string {
  const line = text.replace(/\s+/g, ' ');
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

const FILE_IN_THE_WAY = 'a file is in the way (it needs a folder)';
/** A recorded call's file name: `<role>.task-<id|none>.<purpose>.<turn>.json`. */
const RECORDED_CALL = /^[A-Za-z0-9_-]+\.task-(\d+|none)\.[A-Za-z_]+\.\d+\.json$/;

/** Why a recording's folder cannot be made, in words. */
function whyNotFolder(error: unknown): string {
  const { code, path: where } = error as NodeJS.ErrnoException;
  if (code === 'EEXIST' || code === 'ENOTDIR') return FILE_IN_THE_WAY;
  if (code === 'EACCES') return 'cannot be written';
  // A folder that refuses new folders in it (/proc, /sys): which one.
  if ((code === 'ENOENT' || code === 'EPERM' || code === 'EROFS') && where) return `no folder can be made at ${where} (${code})`;
  return (error as Error).message;
}

/**
 * Why `dir` cannot hold a recording (a file where it or a folder above it would go, a place no folder
 * can be made), or null once it is there: asked, and the folder made, before anything starts.
 */
export function recordFolderProblem(dir: string): string | null {
  try {
    const at = fs.statSync(dir, { throwIfNoEntry: false });
    if (at && !at.isDirectory()) return FILE_IN_THE_WAY;
    // A second recording over a first would mix the two: the calls the new run makes no more of stay.
    const held = at ? fs.readdirSync(dir).filter((name) => RECORDED_CALL.test(name)).length : 0;
    if (held) return `holds a recording already (${held} call${held === 1 ? '' : 's'}): record into an empty folder, or remove that one first`;
    if (at) return null;
    makeDir(dir);
    return null;
  } catch (error) {
    return whyNotFolder(error);
  }
}
