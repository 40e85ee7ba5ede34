import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compactConversation, estimateTokens } from '../../src/core/agent/compaction.js';
import { identityMessages } from '../../src/core/agent/identity.js';
import { type LoopOptions, runLoop } from '../../src/core/agent/loop.js';
import { estimateRequestTokens } from '../../src/core/agent/request-size.js';
import type { ModelMessage, ToolResultBlock } from '../../src/core/model/types.js';
import { handoffData, renderHandoff, taskPrompt } from '../../src/core/stages/handoff.js';
import { TaskSchema } from '../../src/core/board/schemas.js';
import { defineTool, type ToolDefinition, toolSpec } from '../../src/core/tools/tool.js';
import { loadTeammateSettings } from '../../src/core/agent/settings.js';
import { LeadAgent } from '../../src/core/lead/lead-agent.js';
import { LeadSession } from '../../src/core/lead/session.js';
import { FAKE_MODEL_PATH, FakeModel, type RecordedCall, reply, type Step, toolUse } from '../helpers/fake-model.js';
import { loopContext, TEAM } from '../helpers/agent-team.js';
import { removeBoard, tempBoard } from '../helpers/agent-wait.js';

const MB = 1024 * 1024;

/** A tool whose output is `size` characters: a line per kilobyte, numbered, so a cut shows where. */
function dumpTool(size: number): ToolDefinition {
  return defineTool({
    name: 'dump',
    description: 'Prints a lot.',
    inputSchema: z.object({}),
    async run() {
      const line = (i: number) => `line ${String(i).padStart(7, '0')} ${'y'.repeat(1010)}\n`;
      return { content: Array.from({ length: Math.ceil(size / 1024) }, (_, i) => line(i)).join('').slice(0, size) };
    },
  });
}

/** What the recorded call would weigh with the same tool definitions the loop sent. */
function tokensOf(call: RecordedCall, tools: readonly ToolDefinition[]): number {
  return estimateRequestTokens({ system: call.system, tools: tools.map(toolSpec), messages: call.messages });
}

/** The cut notes in `text` (a failed match then prints these lines, not megabytes). */
function notes(text: string): string[] {
  return text.match(/… cut: [^\n]*/g) ?? [];
}

function resultOf(call: RecordedCall): ToolResultBlock {
  const last = call.messages.at(-1)!;
  return (last.content as ToolResultBlock[]).find((block) => block.type === 'tool_result')!;
}

describe('one model request never carries more than MAX_REQUEST_TOKENS', () => {
  let root = '';
  afterEach(() => removeBoard(root));

  function setup(steps: Step[], tools: ToolDefinition[], overrides: Partial<LoopOptions> = {}) {
    root = tempBoard();
    const model = new FakeModel(steps);
    const messages: ModelMessage[] = [...identityMessages('eng', 'engineer', TEAM), { role: 'user', content: 'Task #1: Print things' }];
    const options: LoopOptions = {
      model,
      system: 'You are a test agent.',
      tools,
      messages,
      ctx: loopContext(root),
      agent: { name: 'eng', role: 'engineer', stage: null },
      maxTurns: 10,
      ...overrides,
    };
    return { model, messages, options };
  }

  it('cuts a tool output of many MB in the request, saying where the whole is kept', async () => {
    const tools = [dumpTool(6 * MB)];
    const { model, options } = setup([reply(toolUse('dump', {}, 'toolu_big')), 'seen'], tools);

    await runLoop(options);

    model.assertDone();
    const second = model.requests[1]!;
    expect(tokensOf(second, tools)).toBeLessThanOrEqual(100_000);
    const result = resultOf(second);
    expect(result.content.length).toBeLessThan(100_000 + 500);
    // The start and the end of the output, and between them how much is missing and where it is.
    expect(result.content.startsWith('line 0000000 ')).toBe(true);
    expect(notes(result.content)).toContainEqual(expect.stringMatching(/… cut: 5\.\d MB more; the whole is in \.tmp\/tool-output\/dump-toolu_big\.txt in the workspace/));
    expect(result.content).toContain(`line ${String(Math.ceil((6 * MB) / 1024) - 1).padStart(7, '0')}`);
    const kept = path.join(options.ctx.workspace, '.tmp', 'tool-output', 'dump-toolu_big.txt');
    expect(fs.statSync(kept).size).toBe(6 * MB);
  });

  it('keeps the whole output only inside the workspace: a .tmp linked outside is not written through', async () => {
    const tools = [dumpTool(3 * MB)];
    const { model, options } = setup([reply(toolUse('dump', {}, 'toolu_out')), 'seen'], tools);
    const outside = path.join(root, 'outside');
    fs.mkdirSync(outside);
    fs.symlinkSync(outside, path.join(options.ctx.workspace, '.tmp'));

    await runLoop(options);

    model.assertDone();
    const result = resultOf(model.requests[1]!);
    expect(result.content.length).toBeLessThan(100_000 + 500);
    expect(notes(result.content)).toEqual([expect.stringMatching(/^… cut: 2\.\d MB more; the whole was not kept \(.*symbolic link that points outside the workspace.*\)/)]);
    expect(fs.readdirSync(outside)).toEqual([]);
  });

  it('holds the ceiling when compaction cannot get under it: the oldest texts are cut with a note', async () => {
    const tools = [dumpTool(15_000)];
    const huge = `Task #1: Print things\n\n${'The person wrote a very long description. '.repeat(60_000)}`;
    const { model, messages, options } = setup([reply(toolUse('dump', {})), reply(toolUse('dump', {})), reply(toolUse('dump', {})), 'done'], tools, {
      maxRequestTokens: 20_000,
      tokenBudget: 5_000,
      // A summary that does not shorten anything: the conversation comes back as it was.
      compact: async (current) => current,
    });
    messages[2] = { role: 'user', content: huge };

    await runLoop(options);

    model.assertDone();
    expect(model.requests).toHaveLength(4);
    for (const call of model.requests) expect(tokensOf(call, tools)).toBeLessThanOrEqual(20_000);
    const task = model.requests[0]!.messages[2]!.content as string;
    expect(task.startsWith('Task #1: Print things')).toBe(true);
    expect(notes(task)).toContainEqual(expect.stringMatching(/… cut: [\d.]+ (KB|MB) more; the request is held under MAX_REQUEST_TOKENS \(20000\)/));
    // The newest tool result is whole (the model is about to read it); the older ones were cut first.
    const final = model.requests[3]!;
    expect(resultOf(final).content.length).toBe(15_000);
    const older = final.messages.slice(3, -1).flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b): b is ToolResultBlock => b.type === 'tool_result');
    expect(older).toHaveLength(2);
    for (const result of older) expect(notes(result.content)).toEqual([expect.stringMatching(/the request is held under MAX_REQUEST_TOKENS/)]);
  });

  it('is an error naming MAX_REQUEST_TOKENS when the system prompt alone is over it, before any call', async () => {
    const { model, options } = setup(['never'], [], { system: 'x'.repeat(50_000), maxRequestTokens: 5_000 });
    await expect(runLoop(options)).rejects.toThrow(/over MAX_REQUEST_TOKENS \(5000\).*system prompt and tool definitions alone/);
    expect(model.requests).toHaveLength(0);
  });

  it('holds the summary request of a compaction under the ceiling too', async () => {
    const model = new FakeModel(['summary']);
    const log: ModelMessage[] = [
      ...identityMessages('eng', 'engineer', TEAM),
      { role: 'user', content: 'Task #1' },
      ...Array.from({ length: 40 }, (_, i): ModelMessage => ({ role: i % 2 ? 'user' : 'assistant', content: `note ${i} ${'z'.repeat(30_000)}` })),
    ];
    await compactConversation({ model, messages: log, identity: identityMessages('eng', 'engineer', TEAM), taskPrompt: 'Task #1', agent: { name: 'eng', role: 'engineer', stage: null }, maxRequestTokens: 10_000 });
    const call = model.requests[0]!;
    expect(estimateTokens(call.messages) + Math.ceil(call.system.length / 4)).toBeLessThanOrEqual(10_000);
    expect(JSON.stringify(call.messages)).toContain('the middle of the log is left out (MAX_REQUEST_TOKENS)');
  });
});

describe('a task prompt with large artifacts', () => {
  const at = new Date().toISOString();
  const task = (fields: Record<string, unknown>) => TaskSchema.parse({ id: 7, subject: 'Big', status: 'pending', createdAt: at, updatedAt: at, ...fields });

  it('cuts each large artifact in the handoff, naming the artifact that holds the whole', () => {
    const requirement = `Build it. ${'r'.repeat(2 * MB)}`;
    const diff = `--- a\n+++ b\n${'+x\n'.repeat(400_000)}`;
    const handoff = renderHandoff(
      handoffData({ stage: 'review', revision: 1, description: requirement, artifacts: { requirement, diff, previousIssues: [{ text: 'i'.repeat(MB), severity: 'major' }], submitted: { file: 'a.py', sha256: 'f'.repeat(64), revision: 1 } } }),
      'print(1)\n'.repeat(200_000),
    );
    expect(handoff.length).toBeLessThan(120_000);
    expect(notes(handoff)).toContainEqual(expect.stringMatching(/… cut: 2\.0 MB more; the whole is in this task's artifacts\.requirement/));
    expect(notes(handoff)).toContainEqual(expect.stringMatching(/… cut: 1\.\d MB more; the whole is in this task's artifacts\.diff/));
    expect(notes(handoff)).toContainEqual(expect.stringMatching(/… cut: [\d.]+ (KB|MB) more; the whole is in this task's artifacts\.previousIssues/));
    expect(notes(handoff)).toContainEqual(expect.stringMatching(/… cut: 1\.\d MB more; the whole is in a\.py in the workspace/));
  });

  it('cuts a hand-written description and handoff of megabytes, naming the task field', () => {
    const prompt = taskPrompt(task({ description: 'd'.repeat(4 * MB), handoff: 'h'.repeat(MB) }));
    expect(prompt.length).toBeLessThan(110_000);
    expect(notes(prompt)).toContainEqual(expect.stringMatching(/… cut: 4\.0 MB more; the whole is in task #7's description on the board/));
    expect(notes(prompt)).toContainEqual(expect.stringMatching(/… cut: [\d.]+ KB more; the whole is in task #7's handoff on the board/));
    expect(prompt.endsWith("handoff on the board\n</handoff>")).toBe(true);
  });
});

describe('MAX_REQUEST_TOKENS', () => {
  let root = '';
  afterEach(() => removeBoard(root));

  it('is read like the other limits, and a bad value names it', () => {
    expect(loadTeammateSettings({}).maxRequestTokens).toBe(100_000);
    expect(loadTeammateSettings({ MAX_REQUEST_TOKENS: '20000' }).maxRequestTokens).toBe(20_000);
    expect(() => loadTeammateSettings({ MAX_REQUEST_TOKENS: '10' })).toThrow(/^MAX_REQUEST_TOKENS: 10 is too small \(at least 1000\)$/);
  });

  it("holds the lead agent's requests too", async () => {
    root = tempBoard();
    const recordTo = path.join(root, 'lead-requests.jsonl');
    const session = new LeadSession({
      rootDir: root,
      // The line passes the lead's token budget (10,000 here): a summary call first, then the reply.
      model: { kind: 'module', path: FAKE_MODEL_PATH, options: { script: 'steps', steps: ['The person pasted a long log.', 'Noted.'], recordTo } },
      settings: { maxRequestTokens: 5_000 },
    });
    await session.start([]);
    try {
      // A person pastes a log of nearly 100 KB (the most a message to the lead may hold) into the chat.
      const reply = await session.leadAgent({ tokenBudget: 10_000 }).handle(`Look at this: ${'log line\n'.repeat(11_000)}`);
      expect(reply.text).toBe('Noted.');
    } finally {
      await session.close(500);
    }
    const calls = fs.readFileSync(recordTo, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as RecordedCall);
    expect(calls.map((call) => call.agent?.purpose ?? 'reply')).toEqual(['compaction', 'reply']);
    for (const call of calls) expect(estimateTokens(call.messages) + Math.ceil(call.system.length / 4)).toBeLessThanOrEqual(5_000);
    expect(notes(calls[0]!.messages[0]!.content as string)).toEqual([expect.stringMatching(/^… cut: [\d.]+ KB more; not in this log …$/)]);
  });
});
