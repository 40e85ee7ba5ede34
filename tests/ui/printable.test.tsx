/**
 * Text from outside reaches a terminal as text, never as its controls: a task subject, a question, a
 * command's output or a hook's words holding `ESC ] 2 ; … BEL` (the window's title), `ESC [ 2 J` (clear
 * the screen) or a carriage return (write over the line) are shown escaped — in the ink app's panels
 * and feed, and in every command's text output, through real `autoteam` processes.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { render } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskBoard } from '../../src/core/board/task-board.js';
import { printable } from '../../src/frontend/printable.js';
import { BoardPanel } from '../../src/ui/board-panel.js';
import { QuestionBox } from '../../src/ui/question-box.js';
import { ActivityFeed, boardView } from '../../src/ui/stores.js';
import { removeBoard, tempBoard } from '../helpers/agent-wait.js';
import { cleanEnv, cliEntry } from '../helpers/pipeline-cli.js';

const TITLE = '\u001b]2;pwned\u0007';
const CLEAR = '\u001b[2J\u001b[31mRED\u001b[0m';
/** Any control character but tab and line feed, raw. */
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) removeBoard(root);
});

describe('printable', () => {
  it('escapes control characters, C1 ones too, and keeps tabs, line feeds and all other text', () => {
    expect(printable(`a${TITLE}b`)).toBe('a\\u001b]2;pwned\\u0007b');
    expect(printable('over\rwrite\u0085\u009b2J\u007f')).toBe('over\\u000dwrite\\u0085\\u009b2J\\u007f');
    expect(printable('line one\r\nline two\ttabbed — «ünïcode» ✓')).toBe('line one\nline two\ttabbed — «ünïcode» ✓');
    expect(printable('plain')).toBe('plain');
    // The same twice in a row (a global pattern keeps no state between calls).
    expect(printable(`${CLEAR}`)).toBe(printable(`${CLEAR}`));
  });
});

describe('the ink app', () => {
  it('shows a task subject, a pipeline outcome, a question and a feed line with their controls escaped', () => {
    const at = '2026-01-01T00:00:00.000Z';
    const task = {
      id: 1, subject: `Evil ${TITLE}`, description: '', status: 'completed' as const, owner: null, role: null, stage: 'review', blockedBy: [], blocks: [], pipeline: 1, revision: 0,
      usage: { calls: 0, inputTokens: 0, outputTokens: 0 }, attempts: 0, notBefore: null, claims: 0, lease: null, handoff: '',
      artifacts: { outcome: { action: `merged${CLEAR}`, at } }, result: null, history: [], createdAt: at, updatedAt: at,
    };
    const board = render(<BoardPanel view={boardView([task as never], 12)} width={90} />).lastFrame()!;
    expect(board).toContain('Evil \\u001b]2;pwned\\u0007');
    expect(board).toContain('merged\\u001b[2J');
    const question = render(<QuestionBox questions={[{ questionId: 'q-1', from: 'analyst', question: `Which? ${CLEAR}`, pipeline: 1, task: 1 } as never]} auto={false} />).lastFrame()!;
    expect(question).toContain('Which? \\u001b[2J\\u001b[31mRED\\u001b[0m');
    const feed = new ActivityFeed();
    feed.push(`lead: here is the file: ${TITLE}`);
    expect(feed.get().at(-1)!.text).toBe('lead: here is the file: \\u001b]2;pwned\\u0007');
  });
});

describe('a command\'s text output', () => {
  it('`tasks`, `show` and `events` write a task\'s controls escaped; `show`\'s JSON reads back the same task', async () => {
    const root = tempBoard('autoteam-printable-');
    roots.push(root);
    const board = new TaskBoard(root);
    const task = await board.create({ subject: `Evil ${TITLE}`, description: `over\rwritten ${CLEAR}\u009b` });
    for (const args of [['tasks'], ['show', String(task.id)], ['events']]) {
      const run = spawnSync(process.execPath, [cliEntry, ...args, '--dir', root], { encoding: 'utf8', env: cleanEnv() });
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout, args.join(' ')).not.toMatch(RAW_CONTROL);
      expect(run.stderr, args.join(' ')).not.toMatch(RAW_CONTROL);
      if (args[0] === 'tasks') expect(run.stdout).toContain('Evil \\u001b]2;pwned\\u0007');
      // JSON escapes what is below 0x20 itself; a raw C1 character, escaped on its way out, means the same.
      if (args[0] === 'show') expect(JSON.parse(run.stdout) as { subject: string; description: string }).toMatchObject({ subject: task.subject, description: task.description });
    }
    expect(fs.readFileSync(path.join(root, '.tasks', `task_${task.id}.json`), 'utf8')).toContain('\\u001b]2;pwned');
  });
});
