import { createHash } from 'node:crypto';

/**
 * Trace and span ids every thread and process derives from the events alone, so that the spans each
 * one exports on its own join into one trace per pipeline without any shared memory: the trace of a
 * pipeline and its root span hash (team, pipeline); a general task's trace hashes (team, task); a
 * task attempt's span hashes (team, task, claim token), the token being the claim's fencing number.
 */

function digest(bytes: number, parts: ReadonlyArray<string | number>): string {
  const hex = createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, bytes * 2);
  // An all-zero id is invalid in OpenTelemetry; one chance in 2^64, but cheap to rule out.
  return /^0+$/.test(hex) ? `${hex.slice(0, -1)}1` : hex;
}

/** The trace of a pipeline, or of a general task (one without a pipeline). */
export function traceIdOf(team: string, pipeline: number | null | undefined, task: number | null | undefined): string | null {
  if (pipeline != null) return digest(16, ['autoteam-trace', team, 'pipeline', pipeline]);
  if (task != null) return digest(16, ['autoteam-trace', team, 'task', task]);
  return null;
}

/** The `pipeline <n>` span, root of the pipeline's trace. */
export function pipelineSpanId(team: string, pipeline: number): string {
  return digest(8, ['autoteam-span', team, 'pipeline', pipeline]);
}

/** The `invoke_agent` span of one claim of a task. */
export function attemptSpanId(team: string, task: number, token: number): string {
  return digest(8, ['autoteam-span', team, 'attempt', task, token]);
}
