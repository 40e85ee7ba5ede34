import type { TaskStore } from '../../src/core/board/task-store.js';

/**
 * Another holder of a board-wide lock, as another merger or process would be: resolves once `name`
 * is held; `release()` lets it go, and `done` settles when it has.
 */
export async function holdLock(store: Pick<TaskStore, 'withLock'>, name: string): Promise<{ release: () => void; done: Promise<void> }> {
  let release = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  let holding = () => {};
  const held = new Promise<void>((resolve) => (holding = resolve));
  const done = store.withLock(name, async () => {
    holding();
    await released;
  });
  await Promise.race([held, done]);
  return { release, done };
}
