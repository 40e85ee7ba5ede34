/**
 * One rule for --dir in every command: a folder that does not exist is refused with one line naming
 * `mkdir -p`, exit 2, and nothing is created (a typo never starts a new board and works a pipeline).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { describeRun, runCli } from '../helpers/pipeline-cli.js';

const parent = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-dir-')));
afterAll(() => fs.rmSync(parent, { recursive: true, force: true }));

const COMMANDS: Array<[string, string[]]> = [
  ['the REPL', []],
  ['run', ['run', '--auto', 'Write a Python script that organizes my Downloads folder by file type.']],
  ['worker', ['worker', '--role', 'engineer', '--name', 'eng']],
  ['tasks', ['tasks']],
  ['show', ['show', '1']],
  ['cancel', ['cancel', '1']],
  ['retry', ['retry', '1']],
  ['diff', ['diff', '1']],
  ['stages', ['stages']],
  ['init', ['init']],
];

describe('--dir that does not exist', () => {
  it.each(COMMANDS)('%s refuses it in one line naming mkdir -p, creating nothing', async (_name, args) => {
    const typo = path.join(parent, 'boadr');
    const result = await runCli([...args, '--dir', typo], { cwd: parent, input: '/quit\n' });
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stderr.trim()).toBe(`autoteam: --dir: ${typo} does not exist (to start a board there: mkdir -p ${typo})`);
    expect(result.stdout).toBe('');
    expect(fs.existsSync(typo)).toBe(false);
  });

  it('quotes a path with spaces so the suggested command can be pasted', async () => {
    const typo = path.join(parent, "my board's dir");
    const result = await runCli(['tasks', '--dir', typo], { cwd: parent });
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toBe(`autoteam: --dir: ${typo} does not exist (to start a board there: mkdir -p '${parent}/my board'\\''s dir')`);
  });
});

describe('a board folder whose .tasks or .team is a file', () => {
  it.each([
    ['run', '.tasks', ['run', '--auto', 'Write a Python script that organizes my Downloads folder by file type.']],
    ['tasks', '.tasks', ['tasks']],
    ['events', '.team', ['events']],
    ['the REPL', '.team', []],
  ] as Array<[string, string, string[]]>)('%s with %s a file: one line naming it, exit 2, the file untouched', async (_name, entry, args) => {
    const dir = fs.mkdtempSync(path.join(parent, 'file-'));
    fs.writeFileSync(path.join(dir, entry), 'notes\n');
    const result = await runCli([...args, '--dir', dir], { cwd: dir, input: '/quit\n' });
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stderr.trim()).toBe(`autoteam: --dir: ${path.join(dir, entry)} is a file, where autoteam keeps its ${entry === '.tasks' ? 'tasks' : 'team'} (a folder): move it away`);
    expect(fs.readFileSync(path.join(dir, entry), 'utf8')).toBe('notes\n');
  });
});

describe('--dir and --board given before the command', () => {
  // `mcp serve` sits two levels down: the program's options must reach it, not only its parent's.
  it('autoteam --dir <typo> mcp serve refuses the typo (rather than serving the current folder)', async () => {
    const typo = path.join(parent, 'nowhere');
    const result = await runCli(['--dir', typo, 'mcp', 'serve'], { cwd: parent });
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stderr.trim()).toBe(`autoteam: --dir: ${typo} does not exist (to start a board there: mkdir -p ${typo})`);
  });

  it('autoteam --board <not a URL> mcp serve refuses it (rather than serving the folder)', async () => {
    const result = await runCli(['--board', 'boards/main', 'mcp', 'serve'], { cwd: parent });
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stderr.trim()).toBe("autoteam: --board takes a postgres:// URL, got 'boards/main' (for a board in a folder, use --dir <folder>)");
  });
});
