import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { type Member, TeamRegistry } from '../../src/core/board/index.js';
import { ConfigError, NotFoundError } from '../../src/core/errors.js';
import { Actor, startTogether, tempRoot } from '../helpers/board-spawn.js';

const ROUNDS = 30;

describe('TeamRegistry', () => {
  let root = '';
  afterEach(() => {
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('loses no update when several threads and a process change different members at once', async () => {
    root = tempRoot();
    const registry = new TeamRegistry(root);
    await registry.ensure('crew');
    const names = ['w0', 'w1', 'w2', 'w3', 'p0'];
    const actors = names.map((name) =>
      (name.startsWith('p') ? Actor.process : Actor.thread)<Member>(
        name,
        { kind: 'team', root, name, role: 'engineer', rounds: ROUNDS },
        true,
      ),
    );
    await startTogether(actors);
    const local = (async () => {
      await registry.join('local', 'reviewer');
      for (let round = 1; round <= ROUNDS; round++) await registry.updateMember('local', { task: round });
    })();
    await Promise.all([local, ...actors.map((actor) => actor.result)]);

    const config = JSON.parse(fs.readFileSync(registry.file, 'utf8'));
    expect(config.team).toBe('crew');
    const members = registry.members();
    expect(members.map((m) => m.name).sort()).toEqual([...names, 'local'].sort());
    for (const name of names) {
      expect(registry.get(name)).toMatchObject({ role: 'engineer', status: 'idle', task: ROUNDS });
    }
    expect(registry.get('local')).toMatchObject({ role: 'reviewer', status: 'idle', task: ROUNDS });
    expect(registry.names()[0]).toBe('lead');
  });

  it('rejects an invalid name, the lead\'s name, a name that differs from another only in case, and an unknown member', async () => {
    root = tempRoot();
    const registry = new TeamRegistry(root);
    await registry.ensure('crew', 'boss');
    await expect(registry.join('bad name!', 'engineer')).rejects.toThrow(ConfigError);
    await expect(registry.join('bad name!', 'engineer')).rejects.toThrow(/invalid teammate name 'bad name!'/);
    await expect(registry.join('boss', 'engineer')).rejects.toThrow(/lead/);
    // Names that differ only in case would share an inbox file on a case-insensitive disk.
    await expect(registry.join('Boss', 'engineer')).rejects.toThrow(/'Boss' differs from 'boss' of team 'crew' only in case/);
    await registry.join('engineer-2', 'engineer');
    await expect(registry.join('Engineer-2', 'engineer')).rejects.toThrow(/'Engineer-2' differs from 'engineer-2'/);
    expect(() => registry.checkNameFree(registry.read(), 'Alice', process.pid, ['alice'])).toThrow(/'Alice' differs from 'alice'/);
    // One shut down holds only its own name (a board may hold both cases from before the rule).
    await registry.setStatus('engineer-2', 'shutdown');
    await registry.join('Engineer-2', 'engineer');
    expect(registry.members().map((m) => m.name)).toEqual(['engineer-2', 'Engineer-2']);
    await expect(registry.setStatus('ghost', 'idle')).rejects.toThrow(NotFoundError);
    await expect(registry.setStatus('ghost', 'idle')).rejects.toThrow(/team 'crew'/);
    // A live member of another host whose pid happens to be this process's (containers run theirs as pid 1) is not this process.
    const config = registry.read();
    const twin = { name: 'far', role: 'engineer', status: 'idle' as const, task: null, since: new Date().toISOString(), pid: process.pid, host: 'container-b', heartbeat: new Date().toISOString() };
    expect(() => registry.checkNameFree({ ...config, members: [...config.members, twin] }, 'far', process.pid)).toThrow(`'far' is already a live member of team 'crew' (pid ${process.pid} on container-b); choose another name`);
  });

  it('names a worker started without a name after its role: the first of engineer, engineer-2, … no live member of another process holds', async () => {
    root = tempRoot();
    const registry = new TeamRegistry(root);
    await registry.ensure('crew');
    expect(registry.freeName('engineer')).toBe('engineer');
    // Live members of another process (the parent: alive on this host) hold their names.
    await registry.join('engineer', 'engineer', { pid: process.ppid });
    await registry.join('engineer-2', 'engineer', { pid: process.ppid });
    expect(registry.freeName('engineer')).toBe('engineer-3');
    expect(registry.freeName('reviewer')).toBe('reviewer');
    // A member that left, its process still alive (a lead's teammate resting), keeps its name.
    await registry.setStatus('engineer', 'shutdown');
    expect(registry.freeName('engineer')).toBe('engineer-3');
    // One whose process is gone gives it back; so does a dead one.
    await registry.join('engineer', 'engineer', { pid: spawnSync('true').pid! });
    await registry.setStatus('engineer', 'shutdown');
    expect(registry.freeName('engineer')).toBe('engineer');
    await registry.setStatus('engineer', 'dead');
    expect(registry.freeName('engineer')).toBe('engineer');
    // This process's own member is its to take again.
    await registry.join('analyst', 'analyst', { pid: process.pid });
    expect(registry.freeName('analyst')).toBe('analyst');
    expect(registry.freeName('analyst', process.ppid)).toBe('analyst-2');
  });

  it('keeps the team name on ensure, records since on a status change and clears a reason', async () => {
    let nowMs = Date.parse('2026-01-01T00:00:00.000Z');
    root = tempRoot();
    const registry = new TeamRegistry(root, { now: () => new Date(nowMs) });
    await registry.ensure('crew');
    await registry.ensure('other');
    expect(registry.read().team).toBe('crew');
    await registry.join('ann', 'analyst', { pid: 123 });
    nowMs += 1_000;
    await registry.setStatus('ann', 'dead', { reason: 'exited 1' });
    expect(registry.get('ann')).toMatchObject({ status: 'dead', reason: 'exited 1', since: '2026-01-01T00:00:01.000Z', pid: 123 });
    nowMs += 1_000;
    await registry.updateMember('ann', { task: 4 });
    expect(registry.get('ann')!.since).toBe('2026-01-01T00:00:01.000Z');
    await registry.setStatus('ann', 'idle');
    expect(registry.get('ann')).not.toHaveProperty('reason');
  });

  it('counts a member silent from the end of a board outage at the earliest: no heartbeat could be written during it', async () => {
    let nowMs = Date.parse('2026-01-01T00:00:00.000Z');
    root = tempRoot();
    const registry = new TeamRegistry(root, { now: () => new Date(nowMs) });
    await registry.ensure('crew');
    await registry.join('ann', 'analyst', { pid: process.pid });
    nowMs += 20_000;
    // The board answered again 10 s ago: ann has had 10 s to beat, under the 15 s limit.
    expect(await registry.reapDead(nowMs - 10_000)).toEqual([]);
    expect(registry.get('ann')!.status).toBe('idle');
    const dead = await registry.reapDead();
    expect(dead.map(({ member, why }) => [member.name, why])).toEqual([['ann', 'no heartbeat for 20 s']]);
    expect(registry.get('ann')).toMatchObject({ status: 'dead', reason: 'no heartbeat for 20 s' });
  });

  it('spares the members the caller vouches for (threads it runs), however late their heartbeat', async () => {
    let nowMs = Date.parse('2026-01-01T00:00:00.000Z');
    root = tempRoot();
    const registry = new TeamRegistry(root, { now: () => new Date(nowMs) });
    await registry.ensure('crew');
    await registry.join('ann', 'analyst', { pid: process.pid });
    await registry.join('bob', 'engineer', { pid: process.pid });
    nowMs += 20_000;
    const dead = await registry.reapDead(0, (member) => member.name === 'ann');
    expect(dead.map(({ member }) => member.name)).toEqual(['bob']);
    expect(registry.get('ann')!.status).toBe('idle');
  });

  it('reads the config again when another writer or a hand edit changes it, and a reader changing what it read changes nothing', async () => {
    root = tempRoot();
    const registry = new TeamRegistry(root);
    const other = new TeamRegistry(root);
    await registry.ensure('crew');
    await registry.join('ann', 'analyst');
    const first = registry.read();
    first.members.push({ ...first.members[0]!, name: 'ghost' });
    first.team = 'changed by a reader';
    expect(registry.read().team).toBe('crew');
    expect(registry.members().map((m) => m.name)).toEqual(['ann']);

    // Another writer (another thread or process): a new file renamed in.
    await other.join('bob', 'engineer');
    expect(registry.members().map((m) => m.name)).toEqual(['ann', 'bob']);

    // A hand edit in place, the same size: the file's mtime tells it apart.
    const text = fs.readFileSync(registry.file, 'utf8');
    const edited = text.replace('"crew"', '"band"');
    expect(edited.length).toBe(text.length);
    const fd = fs.openSync(registry.file, 'r+');
    fs.writeSync(fd, edited, 0);
    fs.closeSync(fd);
    fs.utimesSync(registry.file, new Date(), new Date(Date.now() + 5_000));
    expect(registry.read().team).toBe('band');

    // A broken hand edit is reported, naming the file, not read from memory.
    fs.writeFileSync(registry.file, '{ "team": ');
    expect(() => registry.read()).toThrow(registry.file);
    fs.rmSync(registry.file);
    expect(registry.read().members).toEqual([]);
  });

  it('does not keep a version read while its mtime was fresh: a same-size write in the same tick may look alike', async () => {
    root = tempRoot();
    const registry = new TeamRegistry(root);
    await registry.ensure('crew');
    // Stamped later than now, as a write in the tick of the read is: its identity does not yet stand for its content.
    const stamp = new Date(Date.now() + 60_000);
    fs.utimesSync(registry.file, stamp, stamp);
    expect(registry.read().team).toBe('crew');
    // The same file, the same size, the same mtime: only the content differs.
    const text = fs.readFileSync(registry.file, 'utf8');
    const fd = fs.openSync(registry.file, 'r+');
    fs.writeSync(fd, text.replace('"crew"', '"band"'), 0);
    fs.closeSync(fd);
    fs.utimesSync(registry.file, stamp, stamp);
    expect(registry.read().team).toBe('band');
  });
});
