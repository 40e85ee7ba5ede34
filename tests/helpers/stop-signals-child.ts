// Run as `node --import tsx tests/helpers/stop-signals-child.ts`: a process whose SIGINT and SIGTERM
// go to onStopSignals, saying `stopping <signal>` on the first and staying alive until killed.
import { onStopSignals } from '../../src/frontend/quit.js';

onStopSignals((signal) => console.log(`stopping ${signal}`));
setInterval(() => undefined, 60_000);
console.log('ready');
