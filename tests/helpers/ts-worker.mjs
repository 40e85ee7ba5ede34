// Worker threads cannot load .ts under vitest on Node 20: register tsx's loader in this thread,
// then import the real entry (workerData.entry is the file URL of a .ts module).
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.entry);
