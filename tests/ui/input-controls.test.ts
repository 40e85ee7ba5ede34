import { describe, expect, it } from 'vitest';
import { backspace, deleteWord, insert, left, lineOf, pasteText, right, typeChunk } from '../../src/ui/line-editor.js';
import { leadTurn } from '../../src/core/model/scripted/lead.js';

describe('keys that arrive in one chunk with text', () => {
  const typed = (text: string, chunk: string) => typeChunk(lineOf(text), chunk);

  it('applies Backspace/DEL and drops Tab and other controls instead of putting them in the line', () => {
    expect(typed('', '/te\t').state.text).toBe('/te');
    expect(typed('', '/scr\x7f\x7feate').state.text).toBe('/seate');
    expect(typed('', 'ab\bc').state.text).toBe('ac');
    expect(typed('', 'a\x1bb').state.text).toBe('ab');
    expect(typed('plain', ' text')).toEqual({ state: { text: 'plain text', cursor: 10 }, entered: false });
    // A DEL in the chunk erases what was typed before it too, as separate keys would.
    expect(typed('abc', '\x7fd').state.text).toBe('abd');
  });

  it('applies Ctrl+U and Ctrl+W where they fall in the chunk, and drops the keys an unmarked paste may hold', () => {
    expect(typed('', 'abc\x15def').state).toEqual({ text: 'def', cursor: 3 });
    expect(typed('', '/tasks /s\x17\x17/team').state.text).toBe('/team');
    // A word processor's line break (\x0b) or a \x01 in pasted text neither cuts nor moves the line.
    expect(typed('', 'first\x0bsecond').state).toEqual({ text: 'firstsecond', cursor: 11 });
    expect(typed('ab', '\x01X').state).toEqual({ text: 'abX', cursor: 3 });
  });

  it('takes a line break in the chunk as an Enter, keeping the lines', () => {
    expect(typed('', 'line one\rline two')).toEqual({ state: { text: 'line one\nline two', cursor: 17 }, entered: true });
    expect(typed('', 'a\r\nb\n')).toEqual({ state: { text: 'a\nb', cursor: 3 }, entered: true });
  });

  it('submits the line as it stands on an Enter that ends the chunk, wherever the cursor is', () => {
    expect(typeChunk({ text: 'tasks', cursor: 0 }, '/\r')).toEqual({ state: { text: '/tasks', cursor: 1 }, entered: true });
    expect(typeChunk({ text: 'ab', cursor: 1 }, '\r\n')).toEqual({ state: { text: 'ab', cursor: 1 }, entered: true });
  });
});

describe('the line editor', () => {
  it('inserts at the cursor and moves over a character that takes two code units as one', () => {
    const at1 = left(left(lineOf('a😀b')));
    expect(at1.cursor).toBe(1);
    expect(insert(at1, 'XY')).toEqual({ text: 'aXY😀b', cursor: 3 });
    expect(right(at1).cursor).toBe(3);
    expect(backspace(right(at1))).toEqual({ text: 'ab', cursor: 1 });
    expect(deleteWord({ text: 'write the  script now', cursor: 18 })).toEqual({ text: 'write the  now', cursor: 11 });
  });

  it('keeps a paste\'s line breaks and Tabs, as \\n, and drops other controls', () => {
    expect(pasteText('one\r\ntwo\rthree\n\tfour\x07')).toBe('one\ntwo\nthree\n\tfour');
  });
});

describe('the offline lead', () => {
  it('posts "create a task to …" as one general task, a requirement as a pipeline, and asks for more on a fragment', () => {
    expect(leadTurn('create a task to run `ls`', []).calls).toEqual([{ name: 'create_task', input: { subject: 'run `ls`', description: 'run `ls`' } }]);
    // Asked for with its words, the teammate submits a plan first.
    for (const asked of ['create a task to run `ls`, with plan approval', 'create a task to run `ls` (needs a plan)', 'add a task: run `ls` and a plan first']) {
      expect(leadTurn(asked, []).calls).toEqual([{ name: 'create_task', input: { subject: 'run `ls`', description: 'run `ls`', require_plan: true } }]);
    }
    for (const subject of ['write the plan for the launch', 'update the roadmap and plan']) {
      expect(leadTurn(`create a task to ${subject}`, []).calls).toEqual([{ name: 'create_task', input: { subject, description: subject } }]);
    }
    expect(leadTurn('Write a Python script that prints hello', []).calls).toEqual([
      { name: 'create_task', input: { requirement: 'Write a Python script that prints hello' } },
    ]);
    expect(leadTurn('abcdef', []).calls).toEqual([]);
    expect(leadTurn('how is the board doing?', []).calls).toEqual([{ name: 'list_tasks', input: {} }]);
  });

  it('runs a command in quotes and writes a file whose words are in quotes, with its own hands; sentences that only look like it stay requirements', () => {
    expect(leadTurn('run `python3 workspace/1/wordcount.py README.md`', []).calls).toEqual([{ name: 'bash', input: { command: 'python3 workspace/1/wordcount.py README.md' } }]);
    expect(leadTurn("run the command 'ls -la workspace'.", []).calls).toEqual([{ name: 'bash', input: { command: 'ls -la workspace' } }]);
    expect(leadTurn("write a file notes.txt containing 'hello world'", []).calls).toEqual([{ name: 'write_file', input: { path: 'notes.txt', content: 'hello world\n' } }]);
    expect(leadTurn('create the file todo.md with the text "# To do"', []).calls).toEqual([{ name: 'write_file', input: { path: 'todo.md', content: '# To do\n' } }]);
    expect(leadTurn('write a file empty.txt containing ""', []).calls).toEqual([{ name: 'write_file', input: { path: 'empty.txt', content: '' } }]);
    expect(leadTurn('create a task to run `ls`', []).calls).toEqual([{ name: 'create_task', input: { subject: 'run `ls`', description: 'run `ls`' } }]);
    for (const requirement of [
      'run the tests of the word counter and fix what fails',
      'Run the command line parser tests and fix what fails',
      'Execute the command pattern refactor across src/',
      'Write a file organizer in Python that sorts by type',
      'Write a file watcher with inotify support',
      'Make a new file called wordcount.py containing a script that counts the words in a text file',
      'Create the file backup.txt with the contents of notes.txt',
    ]) {
      expect(leadTurn(requirement, []).calls, requirement).toEqual([{ name: 'create_task', input: { requirement } }]);
    }
  });

  it('with its hands turned off (lead.tools), says the config took them, not that a model would help', () => {
    const without = new Set(['create_task', 'list_tasks', 'claim_task']);
    for (const [asked, what] of [['what files are here?', 'list the folder'], ['show me README.md', 'show README.md'], ["in README.md replace 'teh' with 'the'", 'edit README.md'], ['run `ls`', 'run `ls`'], ["write a file a.txt containing 'hi'", 'write a.txt']] as const) {
      const turn = leadTurn(asked, [], without);
      expect(turn.calls).toEqual([]);
      expect(turn.text).toMatch(new RegExp(`^I cannot ${what}: my .* turned off: lead\\.tools in autoteam\\.config\\.json leaves them out \\(a model would not have them either\\)\\.$`));
    }
  });

  it("answers a post with what comes next, not with the post's own line again", () => {
    const posted = { name: 'create_task', input: { requirement: 'x' }, result: { content: 'Posted pipeline #3: task #7 (requirements) for the analyst.', isError: false } };
    const reply = leadTurn('Write a word counter', [posted]).text!;
    expect(reply).toContain('Pipeline #3');
    expect(reply).not.toContain('Posted pipeline');
    // A general task's line is on screen too: the reply says what comes next, not the line again.
    const general = { name: 'create_task', input: { subject: 'run `ls`' }, result: { content: 'Created task #4: run `ls`', isError: false } };
    expect(leadTurn('create a task to run `ls`', [general]).text).toBe('Task #4 is on the board: a teammate takes it, and its result shows here when it is done.');
    // Any other result is still its answer, as before.
    const refused = { name: 'create_task', input: { subject: 'x' }, result: { content: 'no task: the subject is empty', isError: false } };
    expect(leadTurn('create a task to x', [refused]).text).toBe('no task: the subject is empty');
  });
});
