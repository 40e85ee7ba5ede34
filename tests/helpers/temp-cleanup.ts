import { afterAll } from 'vitest';
import { removeTempDirs } from './temp-dirs.js';

// Registered before the file's own hooks, so it runs after them (vitest runs after-hooks as a stack):
// the file has closed its sessions and stopped its processes by then.
afterAll(removeTempDirs);
