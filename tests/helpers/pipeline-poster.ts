/**
 * Worker-thread entry (loaded through tests/helpers/ts-worker.mjs): posts `count` requirements on
 * the board at `root` with its own TaskBoard/Mailbox/Pipeline, as another process would, and sends
 * back the pipeline ids it got. It waits for `go` so that every poster starts at once.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { Mailbox } from '../../src/core/board/mailbox.js';
import { TaskBoard } from '../../src/core/board/task-board.js';
import { Pipeline } from '../../src/core/stages/pipeline.js';

const { root, count, label } = workerData as { root: string; count: number; label: string; entry: string };
const port = parentPort!;

port.once('message', () => {
  const pipeline = new Pipeline(new TaskBoard(root), new Mailbox(root));
  void (async () => {
    const ids: number[] = [];
    for (let i = 0; i < count; i++) ids.push((await pipeline.post(`${label} requirement ${i}`, { by: label })).pipeline!);
    port.postMessage({ ids });
  })().catch((error: unknown) => port.postMessage({ error: String((error as Error).stack ?? error) }));
});
port.postMessage({ ready: true });
