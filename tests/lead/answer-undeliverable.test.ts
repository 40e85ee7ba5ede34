/**
 * An answer the board cannot deliver (a folder where the asker's inbox should be, a team config cut
 * short by hand) is refused before anything is recorded: the question stays open, and once the board
 * is mended the same answer reaches the analyst, which goes on with it. Before, the question was
 * dropped and the log said it answered, while the analyst waited for good.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sessionsOnTempBoards, waitUntil } from '../helpers/repl-session.js';

const made = sessionsOnTempBoards('autoteam-answer-undeliverable-');
const WORDCOUNT = 'Write a Python script that counts the words in a text file.';

describe('an answer the board cannot deliver', () => {
  it('is refused naming the file, and the question stays open until it can be', async () => {
    const root = made.board();
    const session = made.session({ rootDir: root, model: { kind: 'offline', reason: 'test' }, auto: false });
    await session.start([{ name: 'analyst', role: 'analyst' }]);
    const first = await session.post(WORDCOUNT);
    await waitUntil(() => session.pendingQuestions().length === 1, 'the analyst to ask');
    const [question] = session.pendingQuestions();

    const inbox = path.join(root, '.team', 'inbox', 'analyst.jsonl');
    fs.mkdirSync(inbox);
    await expect(session.answer('It reads a file named on the command line and prints the count.')).rejects.toThrow(`${inbox}: is a folder, not an inbox file`);
    expect(session.pendingQuestions().map((pending) => pending.questionId)).toEqual([question!.questionId]);

    const config = path.join(root, '.team', 'config.json');
    const good = fs.readFileSync(config, 'utf8');
    fs.rmdirSync(inbox);
    fs.writeFileSync(config, good.slice(0, 40));
    await expect(session.answer('It reads a file named on the command line and prints the count.')).rejects.toThrow(`${config}: not valid JSON`);
    expect(session.pendingQuestions()).toHaveLength(1);
    expect((await session.events({ pipeline: first.pipeline! })).filter((event) => event.type === 'question_answered')).toEqual([]);

    fs.writeFileSync(config, good);
    await session.answer('It reads a file named on the command line and prints the count.');
    await waitUntil(() => session.snapshot().tasks.some((task) => task.pipeline === first.pipeline && task.stage === 'requirements' && task.status === 'completed'), 'the analysis to complete with the answer');
    const answered = (await session.events({ pipeline: first.pipeline! })).filter((event) => event.type === 'question_answered');
    expect(answered).toHaveLength(1);
  });
});
