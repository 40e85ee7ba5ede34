/** Worker-thread entry: wires the core for one teammate. All logic lives in core/agent/teammate.ts. */
import { parentPort, workerData } from 'node:worker_threads';
import { Teammate, type TeammateEvent } from '../core/agent/teammate.js';
import { Wake } from '../core/agent/wake.js';
import { type Board, openBoard } from '../core/board/board.js';
import { serializeError } from '../core/errors.js';
import { createModel } from '../core/model/factory.js';
import type { TeammateWorkerInit, ToWorker } from '../core/agent/worker-protocol.js';

const init = workerData as TeammateWorkerInit;
const port = parentPort!;
const stop = new AbortController();
const wake = new Wake();

port.on('message', (message: ToWorker) => {
  if (message.type === 'wake') wake.notify();
  else if (message.type === 'stop') stop.abort(new Error(message.reason));
});

let board: Board | undefined;
try {
  const model = await createModel(init.model);
  board = init.board ? await openBoard(init.board, init.rootDir, { poolSize: 3 }) : undefined;
  const teammate = new Teammate({
    name: init.name,
    role: init.role,
    rootDir: init.rootDir,
    prompt: init.prompt,
    model,
    wake,
    signal: stop.signal,
    settings: init.settings,
    emit: (event: TeammateEvent) => port.postMessage(event),
    ...(board ? { board } : {}),
  });
  await teammate.run();
} catch (error) {
  port.postMessage({ type: 'error', name: init.name, error: serializeError(error) });
  process.exitCode = 1;
} finally {
  await board?.close();
}
port.close();
