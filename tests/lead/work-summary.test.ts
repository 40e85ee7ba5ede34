/**
 * A run's summary of the work on its pipeline: this process's trace, and the board's log for the task
 * attempts of other processes, whose events may reach the log a moment after the task's end reached
 * the board.
 */
import { describe, expect, it } from 'vitest';
import { TaskSchema } from '../../src/core/board/schemas.js';
import { FileEventLog } from '../../src/core/events/file-log.js';
import type { TeamEvent } from '../../src/core/events/schema.js';
import { workSummary } from '../../src/core/lead/work-summary.js';
import type { TraceRecord } from '../../src/core/trace/trace.js';
import { tempDir } from '../helpers/temp-dirs.js';

const since = '2026-01-01T00:00:00.000Z';
const at = '2026-01-01T00:00:01.000Z';
const base = { team: 't', ts: at, pipeline: 1 };
const call = (task: number, agent: string, role: string, inputTokens: number): TeamEvent => ({ ...base, type: 'model_call', task, agent, role, provider: 'offline', model: 'm', purpose: 'turn', inputTokens, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: null, latencyMs: 1, stopReason: 'tool_use', text: '' });
const tool = (task: number, agent: string, name: string): TeamEvent => ({ ...base, type: 'tool_call', task, agent, tool: name, args: '', outcome: 'ok', durationMs: 1, summary: '' });
const done = (task: number, agent: string): TeamEvent => ({ ...base, type: 'task_completed', task, agent, result: 'ok' });
const own: TraceRecord[] = [{ kind: 'model_call', agent: 'analyst', role: 'analyst', stage: 'requirements', task: 1, stopReason: 'tool_use', inputTokens: 100, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0, ms: 1, model: 'm', at, pid: 1 }];
const stamps = { createdAt: at, updatedAt: at };
const tasks = [TaskSchema.parse({ ...stamps, id: 1, pipeline: 1, subject: 'analyse', status: 'completed', owner: 'analyst', role: 'analyst' }), TaskSchema.parse({ ...stamps, id: 2, pipeline: 1, subject: 'implement', status: 'completed', owner: 'e2', role: 'engineer' })];

describe('workSummary', () => {
  it('adds the attempts the trace does not hold from the log, and counts the trace once', async () => {
    const log = new FileEventLog(tempDir('autoteam-work-'));
    // The analyst's call is in the trace and in the log: counted once.
    // e2's machine has a clock behind this one's: its events still count, found by their pipeline.
    const behind = (event: TeamEvent): TeamEvent => ({ ...event, ts: '2025-12-31T23:59:00.000Z' });
    await log.append([call(1, 'analyst', 'analyst', 100), done(1, 'analyst'), behind(call(2, 'e2', 'engineer', 40)), behind(tool(2, 'e2', 'write_file')), behind(call(2, 'e2', 'engineer', 2)), behind(done(2, 'e2'))]);
    const work = await workSummary(own, log, tasks, since);
    expect(work).toMatchObject({ modelCalls: 3, inputTokens: 142, toolCalls: 1 });
    expect(work.roles.map((role) => [role.role, role.agents, role.modelCalls])).toEqual([
      ['analyst', ['analyst'], 1],
      ['engineer', ['e2'], 2],
    ]);
  });

  it("waits for another process's events to reach the log after its task ended on the board, and not forever", async () => {
    const log = new FileEventLog(tempDir('autoteam-work-'));
    const late = new Promise<void>((resolve) => setTimeout(() => void log.append([call(2, 'e2', 'engineer', 40), done(2, 'e2')]).then(() => resolve()), 150));
    const work = await workSummary(own, log, tasks, since, { tries: 500, ms: 20 });
    await late;
    expect(work.roles.find((role) => role.role === 'engineer')).toMatchObject({ agents: ['e2'], modelCalls: 1, inputTokens: 40 });

    // A log that never gets there: the summary is what it holds, after the bounded wait.
    const silent = new FileEventLog(tempDir('autoteam-work-'));
    const alone = await workSummary(own, silent, tasks, since, { tries: 3, ms: 10 });
    expect(alone.roles.map((role) => role.role)).toEqual(['analyst']);
  });
});
