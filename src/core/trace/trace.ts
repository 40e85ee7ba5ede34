import fs from 'node:fs';
import path from 'node:path';
import { redact, secretValues } from './redact.js';

export type TraceEvent =
  | {
      kind: 'model_call';
      agent: string;
      role: string;
      stage: string | null;
      task: number | null;
      stopReason: string;
      inputTokens: number;
      outputTokens: number;
      cacheReadTokens: number;
      cacheWriteTokens: number;
      ms: number;
      model: string;
    }
  | { kind: 'tool_call'; agent: string; role: string; stage: string | null; task: number | null; tool: string; ok: boolean; ms: number }
  | { kind: 'status'; agent: string; role: string; status: string; task: number | null; reason?: string }
  | { kind: 'transition'; pipeline: number; from: number; to: number | null; stage: string; next: string; by: string }
  | { kind: 'error'; agent: string; code: string; message: string };

export type TraceRecord = TraceEvent & { at: string; pid: number };

/**
 * `.team/trace.jsonl`: one line per model call, tool call, status change and stage transition.
 * Lines are appended with one write each (small, O_APPEND), and secrets are redacted first.
 */
export class Trace {
  readonly file: string;
  private readonly secrets = secretValues();

  constructor(rootDir: string, private readonly now: () => Date = () => new Date()) {
    this.file = path.join(path.resolve(rootDir), '.team', 'trace.jsonl');
    fs.mkdirSync(path.dirname(this.file), { recursive: true });
  }

  write(event: TraceEvent): void {
    const record = { at: this.now().toISOString(), pid: process.pid, ...event };
    try {
      fs.appendFileSync(this.file, `${redact(JSON.stringify(record), this.secrets)}\n`);
    } catch {
      // Tracing must never take a teammate down.
    }
  }

  read(): TraceRecord[] {
    if (!fs.existsSync(this.file)) return [];
    return fs
      .readFileSync(this.file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .flatMap((line) => {
        try {
          return [JSON.parse(line) as TraceRecord];
        } catch {
          return [];
        }
      });
  }
}
