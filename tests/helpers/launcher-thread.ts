// A worker thread that runs one process and reports the launcher that started it, then idles until
// terminated: the launcher test kills the thread and checks the launcher goes with it.
import { parentPort } from 'node:worker_threads';
import os from 'node:os';
import { runProcess } from '../../src/core/exec/process.js';
import { launcherPid } from '../../src/core/exec/launcher.js';

const result = await runProcess('bash', ['-c', 'echo $PPID'], { cwd: os.tmpdir(), timeoutMs: 20_000, maxOutputChars: 1_000 });
parentPort!.postMessage({ parent: Number(result.stdout), launcher: launcherPid() });
setInterval(() => undefined, 60_000);
