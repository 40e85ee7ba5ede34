/**
 * A teammate's thread whose last span export hangs (a collector that reads the spans and never
 * answers) reports it and ends by itself once its work is done: the socket left open does not hold
 * it until the lead's grace runs out and it is ended by force.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTeam, ManagerRig } from '../helpers/agent-team.js';
import { HANG_MS, removeBoard, tempBoard, until } from '../helpers/agent-wait.js';

const OFFLINE = { kind: 'offline', reason: 'test' } as const;

describe('a teammate thread beside a collector that never answers', () => {
  let root = '';
  let rig: ManagerRig | null = null;
  let silent: http.Server | null = null;
  const names = ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_BSP_SCHEDULE_DELAY', 'OTEL_EXPORTER_OTLP_TIMEOUT'] as const;
  const saved = names.map((name) => process.env[name]);
  afterEach(async () => {
    names.forEach((name, i) => {
      if (saved[i] === undefined) delete process.env[name];
      else process.env[name] = saved[i];
    });
    await rig?.close();
    rig = null;
    silent?.closeAllConnections();
    await new Promise<void>((resolve) => (silent ? silent.close(() => resolve()) : resolve()));
    removeBoard(root);
  });

  it('says so once and leaves on its own, not ended by force after the grace', async () => {
    silent = http.createServer((request) => request.resume());
    await new Promise<void>((resolve) => silent!.listen(0, '127.0.0.1', resolve));
    // A thread takes the environment as it is when it starts. Spans go out while it works (every
    // 50 ms, not every 5 s), so an export is still waiting on the collector when the thread ends.
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    process.env.OTEL_BSP_SCHEDULE_DELAY = '50';
    process.env.OTEL_EXPORTER_OTLP_TIMEOUT = String(HANG_MS);
    root = tempBoard();
    const { board } = await makeTeam(root);
    rig = await ManagerRig.start(root, OFFLINE);
    await rig.spawnIdle('eng', 'engineer');
    const task = await board.create({ subject: 'Say hello', description: 'Run `echo hello` and report.', role: 'engineer' });
    await until(() => board.get(task.id).status === 'completed', 'task completed');
    // A grace far longer than the bounded last export: a thread held by the open socket would be
    // terminated at its end (exit code 1); one that ends itself exits 0.
    expect(await rig.manager.requestShutdown('eng', HANG_MS / 4)).toMatchObject({ kind: 'left', code: 0 });
    const told = rig.events.events.flatMap((event) => (event.type === 'error' && event.error.code === 'TELEMETRY' ? [event.error.message] : []));
    expect(told).toEqual([expect.stringMatching(/^traces could not be sent to http:\/\/127\.0\.0\.1:\d+: no answer within 2 s at the end; the spans still queued were dropped$/)]);
  });
});
