/**
 * Member updates made together are one write of the team config (`TeamRegistry.updateMember`): the
 * teammates that share a thread share its registry, and change status in bursts. Real files and the
 * real lock; a DocStore around the file one counts the writes.
 */
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { type ChangeOptions, type DocStore, FileDocStore } from '../../src/core/board/docs.js';
import { withLock } from '../../src/core/board/lock.js';
import { TeamRegistry } from '../../src/core/board/team-registry.js';
import { NotFoundError } from '../../src/core/errors.js';
import { tempRoot } from '../helpers/board-spawn.js';

/** The file store, its writes of the config counted. */
function counted(root: string): { docs: DocStore; writes: () => number } {
  const inner = new FileDocStore(root);
  let writes = 0;
  const docs: DocStore = {
    describe: (key) => inner.describe(key),
    read: (key, schema) => inner.read(key, schema),
    keys: (prefix) => inner.keys(prefix),
    change: (key, fn, options?: ChangeOptions) => {
      if (key === 'config') writes++;
      return inner.change(key, fn, options);
    },
  };
  return { docs, writes: () => writes };
}

/** Takes `file`'s lock as another writer would, and holds it until `release`, which resolves once it is let go. */
async function holdLock(file: string): Promise<{ release: () => Promise<void> }> {
  let release = () => undefined as void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let locked = () => undefined as void;
  const taken = new Promise<void>((resolve) => (locked = resolve));
  const done = withLock(file, async () => {
    locked();
    await held;
  });
  await taken;
  return {
    release: async () => {
      release();
      await done;
    },
  };
}

describe('TeamRegistry member updates', () => {
  let root = '';
  afterEach(() => {
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  async function team() {
    root = tempRoot();
    const store = counted(root);
    const registry = new TeamRegistry(root, { docs: store.docs });
    await registry.ensure('crew');
    for (const name of ['analyst', 'engineer', 'reviewer']) await registry.join(name, name);
    return { registry, writes: () => store.writes() };
  }

  it('made in one turn are one write, each settling with its own member as written', async () => {
    const { registry, writes } = await team();
    const before = writes();
    const [analyst, engineer, reviewer] = await Promise.all([
      registry.setStatus('analyst', 'working', { task: 1 }),
      registry.setStatus('engineer', 'working', { task: 2 }),
      registry.setStatus('reviewer', 'waiting', { task: 3, reason: 'for an answer' }),
    ]);
    expect(writes() - before).toBe(1);
    expect([analyst.name, analyst.status, analyst.task]).toEqual(['analyst', 'working', 1]);
    expect([engineer.name, engineer.status, engineer.task]).toEqual(['engineer', 'working', 2]);
    expect(reviewer).toMatchObject({ name: 'reviewer', status: 'waiting', task: 3, reason: 'for an answer' });
    // On disk, as another process reads it.
    const written = JSON.parse(fs.readFileSync(registry.file, 'utf8')) as { members: Array<{ name: string; status: string; task: number | null }> };
    expect(written.members.map((m) => [m.name, m.status, m.task])).toEqual([
      ['analyst', 'working', 1],
      ['engineer', 'working', 2],
      ['reviewer', 'waiting', 3],
    ]);
  });

  it("one member's updates land in order, and a name the config lacks or a record it refuses fails only its own caller", async () => {
    const { registry, writes } = await team();
    const before = writes();
    const first = registry.setStatus('engineer', 'working', { task: 7, reason: 'claimed' });
    const gone = registry.setStatus('nobody', 'working', { task: 8 });
    const refused = registry.setStatus('reviewer', 'working', { task: 0 });
    const second = registry.setStatus('engineer', 'idle', { task: null });
    await expect(gone).rejects.toBeInstanceOf(NotFoundError);
    await expect(gone).rejects.toThrow("'nobody' is not a member of team 'crew'");
    await expect(refused).rejects.toThrow(/^member 'reviewer': task: /);
    expect(await first).toMatchObject({ status: 'working', task: 7, reason: 'claimed' });
    const last = await second;
    expect(last).toMatchObject({ status: 'idle', task: null });
    // The status changed twice in the write: the reason went with the first.
    expect(last.reason).toBeUndefined();
    expect(registry.get('engineer')).toMatchObject({ status: 'idle', task: null });
    expect(registry.get('reviewer')).toMatchObject({ status: 'idle', task: null });
    expect(writes() - before).toBe(1);
  });

  it('writes nothing when no member of the batch changed', async () => {
    const { registry } = await team();
    const before = fs.statSync(registry.file);
    await expect(registry.setStatus('nobody', 'working', { task: 1 })).rejects.toBeInstanceOf(NotFoundError);
    const after = fs.statSync(registry.file);
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
  });

  it("a member's update made while the write before it waits for the lock lands after it, whoever takes the lock first", async () => {
    const { registry } = await team();
    // The lock's waiters back off at random: a later write that raced the earlier one could win it.
    for (let round = 0; round < 5; round++) {
      const other = await holdLock(registry.file);
      const working = registry.setStatus('engineer', 'working', { task: round + 1 });
      // That write has begun and waits for the lock; the next update comes after it began.
      await new Promise((resolve) => setImmediate(resolve));
      const idle = registry.setStatus('engineer', 'idle', { task: null });
      // A turn for a write of it to begin, were it not held back behind the first.
      await new Promise((resolve) => setImmediate(resolve));
      await other.release();
      await Promise.all([working, idle]);
      expect(registry.get('engineer')).toMatchObject({ status: 'idle', task: null });
    }
  });

  it('made while its write waits for the lock go in the write after it, none lost', async () => {
    const { registry, writes } = await team();
    const before = writes();
    // Another writer holds the config's lock.
    const other = await holdLock(registry.file);
    const early = registry.setStatus('analyst', 'working', { task: 1 });
    // The first write has started and waits for the lock; these come after it began.
    await new Promise((resolve) => setImmediate(resolve));
    const late = [registry.setStatus('engineer', 'working', { task: 2 }), registry.setStatus('reviewer', 'working', { task: 3 })];
    await other.release();
    await Promise.all([early, ...late]);
    expect(writes() - before).toBe(2);
    expect(registry.members().map((m) => [m.name, m.status, m.task])).toEqual([
      ['analyst', 'working', 1],
      ['engineer', 'working', 2],
      ['reviewer', 'working', 3],
    ]);
  });
});
