/**
 * `pipeline_status` with `wait_seconds`: a pipeline that does not end within the wait is answered
 * with its state when the wait runs out, even while the server's heap is collected. A timeout signal
 * that only AbortSignal.any held was collected on Node 20 before it fired, and the call never answered.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import { fileBoard } from '../../src/core/board/board.js';
import { BoardLead } from '../../src/core/lead/board-lead.js';
import { boardClient } from '../helpers/board-client.js';

v8.setFlagsFromString('--expose-gc');
const collect = vm.runInNewContext('gc') as () => void;

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
});

describe('pipeline_status with wait_seconds', () => {
  it('answers with the state when the wait runs out, though the heap is collected meanwhile', async () => {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-mcp-wait-')));
    closers.push(async () => fs.rmSync(root, { recursive: true, force: true }));
    const board = fileBoard(root);
    const lead = new BoardLead(board, { reconcileMs: 200 });
    closers.push(() => board.close(), () => lead.close());
    await lead.start();
    // No team runs: the pipeline stays active for as long as anyone waits.
    const posted = await lead.post('Write a Python script that counts the words in a text file.');
    const { client, close } = await boardClient(lead, root);
    closers.push(close);

    const collecting = setInterval(collect, 20);
    try {
      const started = Date.now();
      const result = await client.callTool({ name: 'pipeline_status', arguments: { pipeline: posted.pipeline, wait_seconds: 1 } });
      expect(Date.now() - started).toBeGreaterThanOrEqual(950);
      expect(result.isError ?? false).toBe(false);
      const state = JSON.parse((result.content as Array<{ text: string }>)[0]!.text) as { pipeline: number; status: string };
      expect(state).toMatchObject({ pipeline: posted.pipeline, status: 'active' });
    } finally {
      clearInterval(collecting);
    }
  });
});
