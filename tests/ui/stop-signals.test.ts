import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { onStopSignals, SAME_STOP_MS } from '../../src/frontend/quit.js';
import { until } from '../helpers/agent-wait.js';

describe('onStopSignals', () => {
  let off: (() => void) | null = null;
  afterEach(() => off?.());

  it('stops once when the same stop comes twice at once (timeout signals the process, then its group)', () => {
    const stops: string[] = [];
    off = onStopSignals((signal) => stops.push(signal));
    process.emit('SIGTERM', 'SIGTERM');
    process.emit('SIGTERM', 'SIGTERM');
    process.emit('SIGINT', 'SIGINT');
    expect(stops).toEqual(['SIGTERM']);
    // Still handled: a real repeat in the window would not meet the default action, which kills.
    expect(process.listeners('SIGTERM')).toHaveLength(1);
    expect(process.listeners('SIGINT')).toHaveLength(1);
  });

  it('a signal again after that ends the process by it, as a second Ctrl+C means', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', new URL('../helpers/stop-signals-child.ts', import.meta.url).pathname], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
    await until(() => out.includes('ready'), 'the child to be ready');
    child.kill('SIGINT');
    await until(() => out.includes('stopping SIGINT'), 'the first stop');
    const first = Date.now();
    // The window is time itself: what is waited for is its end.
    await until(() => Date.now() - first > SAME_STOP_MS, 'the same-stop window to pass');
    child.kill('SIGINT');
    expect(await exited).toBe('SIGINT');
    expect(out.match(/stopping/g)).toHaveLength(1);
  });
});
