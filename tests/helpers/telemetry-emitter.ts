/**
 * runTelemetryJob as a worker thread (through ts-worker.mjs, the job in `workerData.job`) or as a
 * child process (`node --import tsx telemetry-emitter.ts '<job json>'`): the result is posted to the
 * parent, or printed as one JSON line.
 */
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { type TelemetryJob, runTelemetryJob } from './telemetry-job.js';

const job: TelemetryJob = isMainThread ? JSON.parse(process.argv[2]!) : (workerData as { job: TelemetryJob }).job;
const result = await runTelemetryJob(job);
if (isMainThread) process.stdout.write(`${JSON.stringify(result)}\n`);
else parentPort!.postMessage(result);
