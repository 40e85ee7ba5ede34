import { spawn } from 'node:child_process';
import readline from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { pidAlive } from '../../src/core/board/pid.js';
import { until } from '../helpers/agent-wait.js';

const children: Array<{ kill(signal: NodeJS.Signals): boolean }> = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

describe('pidAlive', () => {
  it('is true for a running process and false for one that is gone, a zombie included', async () => {
    // `sleep 0.2` is left unreaped by its parent (bash exec'd into a sleep that never waits): a zombie
    // once it exits, as a lead killed by `timeout -s KILL` is until PID 1 collects it.
    const parent = spawn('bash', ['-c', 'sleep 0.2 & echo $!; exec sleep 3600'], { stdio: ['ignore', 'pipe', 'ignore'] });
    children.push(parent);
    const zombie = Number(await new Promise<string>((resolve) => readline.createInterface({ input: parent.stdout! }).once('line', resolve)));
    expect(pidAlive(zombie)).toBe(true);
    await until(() => !pidAlive(zombie), 'the child to exit, unreaped');
    // Still in the process table, as a zombie: kill(pid, 0) alone would call it alive.
    expect(() => process.kill(zombie, 0)).not.toThrow();
    expect(pidAlive(parent.pid!)).toBe(true);
    expect(pidAlive(process.pid)).toBe(true);
  });
});
