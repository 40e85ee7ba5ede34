export * from './schemas.js';
export * from './artifacts.js';
export * from './task-board.js';
export * from './mailbox.js';
export * from './team-registry.js';
export * from './watcher.js';
export { withLock, type LockOptions } from './lock.js';
export { writeJsonAtomic, readJsonFile } from './atomic-io.js';
export * from './requests.js';
