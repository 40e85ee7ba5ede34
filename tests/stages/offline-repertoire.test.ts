import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Teammate } from '../../src/core/agent/teammate.js';
import { Wake } from '../../src/core/agent/wake.js';
import { Mailbox } from '../../src/core/board/mailbox.js';
import { TaskBoard } from '../../src/core/board/task-board.js';
import { LeadSession } from '../../src/core/lead/session.js';
import { analystTurn, criteriaFor, topicsFor } from '../../src/core/model/scripted/analyst.js';
import type { HandoffData } from '../../src/core/stages/handoff.js';
import { addAcceptanceCriterionTool } from '../../src/core/tools/add-acceptance-criterion.js';
import { buildProgram } from '../../src/core/model/scripted/programs.js';
import { DEFAULT_ORGANIZER_SPEC, kindOf, organizerSpec } from '../../src/core/model/scripted/repertoire.js';
import { ScriptedModel } from '../../src/core/model/scripted/scripted-model.js';
import { Pipeline } from '../../src/core/stages/pipeline.js';
import { snapshotWorkspace } from '../../src/core/stages/submission.js';
import { HANG_MS } from '../helpers/agent-wait.js';

const roots: string[] = [];
const sessions: LeadSession[] = [];
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.close(1_000).catch(() => undefined);
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
});

async function runPipeline(requirement: string) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-offline-'));
  roots.push(root);
  const session = new LeadSession({ rootDir: root, model: { kind: 'offline', reason: 'test' }, auto: true, settings: { pollMs: 200 } });
  sessions.push(session);
  await session.start();
  const first = await session.post(requirement);
  const state = await session.waitForPipeline(first.pipeline!, AbortSignal.timeout(HANG_MS));
  return { root, state, workspace: path.join(root, 'workspace', String(first.pipeline)) };
}

describe('the offline engineer', () => {
  it.each([
    ['Write a Python script that counts the words in a text file.', 'wordcount.py', 'test_wordcount.py', ['python3', 'wordcount.py']],
    ['Write a JavaScript program that counts words and lines in a file.', 'wordcount.mjs', 'wordcount.test.mjs', ['node', 'wordcount.mjs']],
  ])('writes a working word counter with unit tests that the reviewer runs: %s', async (requirement, file, testFile, command) => {
    const { state, workspace } = await runPipeline(requirement);
    expect(state.status).toBe('approved');
    expect(fs.existsSync(path.join(workspace, testFile))).toBe(true);
    const reviews = state.tasks.filter((task) => task.stage === 'review');
    // The reviewer ran the engineer's tests, not a smoke run.
    expect(reviews.at(-1)!.artifacts.tests?.mode).not.toBe('smoke');
    expect(reviews.at(-1)!.artifacts.tests?.ok).toBe(true);
    const sample = path.join(workspace, 'sample.txt');
    fs.writeFileSync(sample, 'alpha beta\ngamma\n');
    const run = spawnSync(command[0]!, [command[1]!, sample], { cwd: workspace, encoding: 'utf8' });
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('lines: 2  words: 3  characters: 17');
    expect(fs.readFileSync(path.join(workspace, file), 'utf8').length).toBeGreaterThan(0);
  });
});

describe('the offline analyst', () => {
  it('introduces each question in its own words: the first, the ones between, the last', () => {
    const requirement = 'Write a word counter.';
    const topics = topicsFor(requirement);
    expect(topics.length).toBeGreaterThanOrEqual(2);
    const handoff = { requirement } as HandoffData;
    const said: string[] = [];
    const calls: Array<{ name: string; input: Record<string, unknown>; result: { content: string; isError: boolean } }> = [];
    for (let asked = 0; asked < topics.length; asked++) {
      const turn = analystTurn(handoff, calls);
      expect(turn.calls).toEqual([{ name: 'ask_clarifying_question', input: { question: topics[asked]!.question } }]);
      said.push(turn.text!);
      calls.push({ ...turn.calls![0]!, result: { content: 'an answer', isError: false } });
    }
    expect(said[0]).toBe('I need one detail before writing requirements.');
    expect(said.at(-1)).toBe('A last detail, then I write the requirements.');
    expect(new Set(said).size).toBe(said.length);
  });

  it('records criteria the tool takes for a requirement of the largest size, cut with an ellipsis', () => {
    const requirement = `Write a tool that does this: ${'a'.repeat(100 * 1024)}`;
    const criteria = criteriaFor(kindOf(requirement), requirement, {});
    for (const criterion of criteria) expect(addAcceptanceCriterionTool.inputSchema.safeParse(criterion).success, criterion.criterion.slice(0, 80)).toBe(true);
    expect(criteria[0]!.criterion).toMatch(/^The program does what was asked: Write a tool that does this: a+…$/);
    expect(criteriaFor(null, 'Write a tool.', {})[0]!.criterion).toBe('The program does what was asked: Write a tool.');
  });
});

describe('the offline reviewer', () => {
  it('catches a program that ignores the answers: its check for the criterion fails and it sends the work back with a blocker', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-offline-review-'));
    roots.push(root);
    const board = new TaskBoard(root);
    const mailbox = new Mailbox(root);
    await mailbox.registry.ensure('test');
    const pipeline = new Pipeline(board, mailbox);
    const requirement = 'Write a Python script that organizes my Downloads folder by file type.';
    const first = await pipeline.post(requirement, { startStage: 'implementation' });
    // The analyst was told "Pictures and Misc only"; the engineer wrote the default organizer anyway.
    const answers = { file_types: 'Pictures and Misc only' };
    const criteria = criteriaFor('organizer', requirement, answers).map((c, i) => ({ id: `AC${i + 1}`, ...c }));
    const program = buildProgram('organizer', 'python', DEFAULT_ORGANIZER_SPEC);
    const workspace = pipeline.workspaceOf(1);
    fs.mkdirSync(workspace, { recursive: true });
    fs.writeFileSync(path.join(workspace, program.file), program.content);
    const claim = await board.claim(first.id, 'engineer');
    if (!claim.ok) throw new Error(claim.reason);
    const fence = { owner: 'engineer', token: claim.task.claims };
    await board.update(first.id, { artifacts: { criteria } }, { fence });
    const files = snapshotWorkspace(root, workspace);
    await pipeline.advance(claim.task, fence, {
      tool: 'submit_for_review',
      artifacts: { submitted: { file: program.file, sha256: files[program.file]!, revision: 0, files } },
      result: 'submitted',
    });

    const reviewer = new Teammate({
      name: 'reviewer',
      role: 'reviewer',
      rootDir: root,
      model: new ScriptedModel(),
      wake: new Wake(),
      signal: AbortSignal.timeout(HANG_MS),
      settings: { pollMs: 25, idleTimeoutMs: 300 },
    });
    expect(await reviewer.run()).toMatch(/^idle for/);

    const review = board.list().find((task) => task.stage === 'review')!;
    expect(review.artifacts.verdict).toBe('changes requested');
    expect(review.artifacts.checks?.[0]).toMatchObject({ id: 'CHK1', ok: false });
    expect(review.artifacts.checks?.[0]?.output).toMatch(/FAILED: .*sample1\.jpg is not in Pictures\//);
    expect(review.artifacts.issues).toContainEqual(expect.objectContaining({ severity: 'blocker', criterion: 'AC1', text: expect.stringMatching(/^AC1 not met/) }));
    expect(board.list().at(-1)).toMatchObject({ stage: 'implementation', revision: 1, status: 'pending' });
  });
});

// What the offline model can build, decided from the requirement and the answers alone. The CLI runs
// in tests/e2e/run-offline.test.ts show how a "no" ends a pipeline; here every case of it is checked.
describe('the offline repertoire', () => {
  it.each([
    'Write a Python script that sorts the lines of a text file.',
    'Organize my music playlist.',
    'Count the HN titles on the front page.',
    'Write a Python web scraper for the top 30 HN titles into a CSV.',
    'Write a JavaScript CSV parser.',
    'Count word frequencies in a text file.',
    'Write a Python script that organizes my Downloads folder by file size.',
    'Write a Python script that organizes my Downloads folder by file type, including all subfolders recursively.',
    'Write a Python script that organizes my Downloads folder by file type and deletes files older than 30 days.',
    'Write a Python script that counts how often each word appears in a text file.',
    'Write a Go program that counts the words in a text file.',
    'Write a TypeScript script that organizes my Downloads folder by file type.',
    'Write a word counter for every file in a folder.',
  ])('has nothing for a requirement outside it: %s', (requirement) => {
    expect(kindOf(requirement)).toBeNull();
  });

  it.each([
    ['Write a Python script that organizes my Downloads folder by file type.', 'organizer'],
    ['Write a Python script that counts the words in a text file.', 'wordcount'],
    ['Write a JavaScript program that counts words and lines in a file.', 'wordcount'],
    ['Write a word counter.', 'wordcount'],
    ['Write a word-count tool in JavaScript.', 'wordcount'],
  ])('builds what it knows: %s', (requirement, kind) => {
    expect(kindOf(requirement)).toBe(kind);
  });

  it.each([
    ['Images for jpg and png, Documents for pdf and txt, everything else in Other.', [['Images', ['.jpg', '.png']], ['Documents', ['.pdf', '.txt']]], 'Other'],
    ['Photos for jpg, png and gif; Docs for pdf', [['Photos', ['.jpg', '.png', '.gif']], ['Docs', ['.pdf']]], 'Other'],
    ['Images (jpg, png), Documents (pdf) and the rest in Misc', [['Images', ['.jpg', '.png']], ['Documents', ['.pdf']]], 'Misc'],
    // "for" as a plain word: a known folder name, with its usual extensions.
    ['Use Pictures for now', [['Pictures', ['.jpg', '.jpeg', '.png', '.gif', '.bmp', '.svg', '.webp', '.heic']]], 'Other'],
  ] as const)('takes the folders and extensions an answer names: %s', (fileTypes, categories, fallback) => {
    const spec = organizerSpec({ file_types: fileTypes, name_conflicts: 'skip' });
    expect(spec.ok && { categories: spec.value.categories, fallback: spec.value.fallback }).toEqual({ categories: categories.map(([name, extensions]) => ({ name, extensions })), fallback });
  });

  it.each([
    ['folders it cannot fill from the answer', 'Receipts and Stuff', 'rename the new one', "it cannot tell which files go into 'Receipts', 'Stuff'"],
    ['folders by size, not by type', 'Small (under 1 MB), Large (1 MB or more)', 'skip', "it cannot tell which files go into 'Small': 'under 1 MB' is not a list of file extensions"],
    ['one extension in two folders', 'Images (jpg, png), Pictures (png, gif)', 'skip', 'the answer puts .png in both Images and Pictures'],
    ['renaming the file already there', 'Photos: jpg, png; Docs: pdf', 'rename the old one', 'it can only rename the incoming file, not the existing one'],
  ])('gives up, saying why, when an answer asks for what it cannot build: %s', (_label, fileTypes, conflicts, reason) => {
    const spec = organizerSpec({ file_types: fileTypes, name_conflicts: conflicts });
    expect(spec.ok).toBe(false);
    expect(!spec.ok && spec.reason).toContain(reason);
  });
});
