import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { compactConversation } from '../../src/core/agent/compaction.js';
import { identityMessages } from '../../src/core/agent/identity.js';
import { type LoopOptions, runLoop } from '../../src/core/agent/loop.js';
import type { EventInput } from '../../src/core/events/schema.js';
import { NO_REASON } from '../../src/core/hooks/runner.js';
import type { ModelMessage, ToolResultBlock } from '../../src/core/model/types.js';
import { idleTool } from '../../src/core/tools/idle.js';
import { defineTool, type ToolDefinition } from '../../src/core/tools/tool.js';
import { Trace } from '../../src/core/trace/trace.js';
import { FakeModel, hangUntilAborted, reply, type Step, text, toolUse } from '../helpers/fake-model.js';
import { identityText, loopContext, TEAM } from '../helpers/agent-team.js';
import { removeBoard, tempBoard } from '../helpers/agent-wait.js';

const TASK = 'Task #1: Echo things\n\nEcho what you are asked to.';

describe('runLoop', () => {
  let root = '';
  afterEach(() => removeBoard(root));

  /** Tools that record what they were run with; `finish` is a stage-like signal tool. */
  function tools() {
    const ran: string[] = [];
    const echo = defineTool({
      name: 'echo',
      description: 'Echo the text back.',
      inputSchema: z.object({ text: z.string(), times: z.number().int().optional() }),
      async run({ text: value, times }) {
        ran.push(`echo:${value}`);
        return { content: `echo: ${value.repeat(times ?? 1)}` };
      },
    });
    const explode = defineTool({
      name: 'explode',
      description: 'Always throws.',
      inputSchema: z.object({}),
      async run() {
        ran.push('explode');
        throw new Error('kaboom in the tool');
      },
    });
    const finish = defineTool({
      name: 'finish',
      description: 'A signal tool: ends the task with a transition.',
      inputSchema: z.object({ summary: z.string() }),
      async run(input) {
        ran.push('finish');
        return { content: 'Finished.', signal: { kind: 'transition', tool: 'finish', input, artifacts: { summary: input.summary }, result: input.summary } };
      },
    });
    const idle: ToolDefinition = {
      ...idleTool,
      async run(input, ctx) {
        ran.push('idle');
        return idleTool.run(input as { reason?: string }, ctx);
      },
    };
    return { ran, list: [echo, explode, finish, idle] as ToolDefinition[] };
  }

  function setup(steps: Step[], overrides: Partial<LoopOptions> = {}) {
    root = tempBoard();
    const model = new FakeModel(steps);
    const { ran, list } = tools();
    const messages: ModelMessage[] = [...identityMessages('eng', 'engineer', TEAM), { role: 'user', content: TASK }];
    const trace = new Trace(root);
    const options: LoopOptions = {
      model,
      system: 'You are a test agent.',
      tools: list,
      messages,
      ctx: loopContext(root),
      agent: { name: 'eng', role: 'engineer', stage: null },
      maxTurns: 10,
      trace,
      ...overrides,
    };
    return { model, ran, messages, trace, options };
  }

  function resultsOf(message: ModelMessage | undefined): ToolResultBlock[] {
    expect(message?.role).toBe('user');
    expect(Array.isArray(message?.content)).toBe(true);
    return (message!.content as ToolResultBlock[]).filter((block) => block.type === 'tool_result');
  }

  it('answers every tool_use with a tool_result, in order, in the next message', async () => {
    const first = toolUse('echo', { text: 'a' }, 'toolu_a');
    const second = toolUse('echo', { text: 'b', times: 2 }, 'toolu_b');
    const { model, ran, messages, options } = setup([
      reply(text('Echoing twice.'), first, second),
      (call) => {
        const results = resultsOf(call.messages.at(-1));
        return `I saw ${results.map((r) => r.content).join(' and ')}`;
      },
    ]);

    const result = await runLoop(options);

    model.assertDone();
    expect(result.outcome).toEqual({ kind: 'end_turn', text: 'I saw echo: a and echo: bb' });
    expect(result.turns).toBe(2);
    expect(ran).toEqual(['echo:a', 'echo:b']);
    // The second request carries the assistant's tool_use message, then exactly one result per use.
    const seen = model.requests[1]!.messages;
    expect(seen.at(-2)).toEqual({ role: 'assistant', content: [text('Echoing twice.'), first, second] });
    expect(resultsOf(seen.at(-1))).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_a', content: 'echo: a' },
      { type: 'tool_result', tool_use_id: 'toolu_b', content: 'echo: bb' },
    ]);
    // Roles alternate all the way through (the API refuses two user messages in a row).
    const roles = messages.map((m) => m.role);
    roles.forEach((role, i) => expect(role).toBe(i % 2 === 0 ? 'user' : 'assistant'));
    expect(result.usage.inputTokens).toBe(100);
  });

  it('answers an unknown tool with is_error listing the tools that are allowed', async () => {
    const { model, ran, options } = setup([reply(toolUse('rm_rf', { path: '/' }, 'toolu_x')), 'ok, I will not.']);

    const result = await runLoop(options);

    model.assertDone();
    expect(result.outcome.kind).toBe('end_turn');
    expect(ran).toEqual([]);
    const [answer] = resultsOf(model.requests[1]!.messages.at(-1));
    expect(answer).toMatchObject({ tool_use_id: 'toolu_x', is_error: true });
    expect(answer!.content).toContain("'rm_rf'");
    for (const name of ['echo', 'explode', 'finish', 'idle']) expect(answer!.content).toContain(name);
  });

  it('answers null, missing and wrong-typed arguments with is_error naming the field; the tool never runs', async () => {
    const uses = [
      toolUse('echo', null, 'toolu_null'),
      { type: 'tool_use' as const, id: 'toolu_absent', name: 'echo' } as ReturnType<typeof toolUse>,
      toolUse('echo', {}, 'toolu_missing'),
      toolUse('echo', { text: 42 }, 'toolu_number'),
      toolUse('echo', { text: 'ok', times: 'twice' }, 'toolu_times'),
      toolUse('echo', 'just a string', 'toolu_string'),
    ];
    const { model, ran, options } = setup([reply(...uses), 'giving up']);

    const result = await runLoop(options);

    model.assertDone();
    expect(result.outcome).toEqual({ kind: 'end_turn', text: 'giving up' });
    expect(ran).toEqual([]);
    const answers = resultsOf(model.requests[1]!.messages.at(-1));
    expect(answers.map((a) => a.tool_use_id)).toEqual(uses.map((u) => u.id));
    for (const answer of answers) {
      expect(answer.is_error).toBe(true);
      expect(answer.content).toMatch(/^Invalid arguments for echo: /);
      // What is expected is always spelled out, so even a null input names the field to send.
      expect(answer.content).toContain('Expected: {text: string, times?: integer}');
    }
    const byId = new Map(answers.map((a) => [a.tool_use_id, a.content]));
    expect(byId.get('toolu_missing')).toMatch(/Invalid arguments for echo: text: /);
    expect(byId.get('toolu_number')).toMatch(/Invalid arguments for echo: text: .*number/);
    expect(byId.get('toolu_times')).toMatch(/Invalid arguments for echo: times: /);
    expect(byId.get('toolu_null')).toMatch(/null/);
  });

  it('turns a tool that throws into an is_error result and keeps going', async () => {
    const { model, ran, options, trace } = setup([reply(toolUse('explode', {}, 'toolu_boom')), reply(toolUse('echo', { text: 'after' })), 'done']);

    const result = await runLoop(options);

    model.assertDone();
    expect(result.outcome).toEqual({ kind: 'end_turn', text: 'done' });
    expect(ran).toEqual(['explode', 'echo:after']);
    const [answer] = resultsOf(model.requests[1]!.messages.at(-1));
    expect(answer).toMatchObject({ tool_use_id: 'toolu_boom', is_error: true });
    expect(answer!.content).toContain('kaboom in the tool');
    const calls = trace.read().filter((r) => r.kind === 'tool_call');
    expect(calls.map((c) => [c.kind === 'tool_call' && c.tool, c.kind === 'tool_call' && c.ok])).toEqual([
      ['explode', false],
      ['echo', true],
    ]);
  });

  it('stops at end_turn: a response without tool use ends the run after one call', async () => {
    const { model, options, trace } = setup(['All done here.']);
    const result = await runLoop(options);
    model.assertDone();
    expect(result).toMatchObject({ outcome: { kind: 'end_turn', text: 'All done here.' }, turns: 1 });
    const calls = trace.read().filter((r) => r.kind === 'model_call');
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ agent: 'eng', role: 'engineer', stopReason: 'end_turn', inputTokens: 50, outputTokens: 10, model: 'fake-model' });
    expect(typeof (calls[0] as { ms: unknown }).ms).toBe('number');
  });

  it('stops when the idle tool is called, and still answers it', async () => {
    const { model, messages, options } = setup([reply(toolUse('idle', { reason: 'nothing to do' }, 'toolu_idle'))]);
    const result = await runLoop(options);
    model.assertDone();
    expect(result.outcome).toEqual({ kind: 'idle', reason: 'nothing to do' });
    expect(resultsOf(messages.at(-1))).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_idle', content: 'Going idle.' }]);
  });

  it('stops after maxTurns model calls, with every tool_use answered', async () => {
    const busy: Step = () => reply(toolUse('echo', { text: 'again' }));
    const { model, ran, messages, options } = setup([busy, busy, busy], { maxTurns: 3 });
    const result = await runLoop(options);
    model.assertDone();
    expect(result.outcome).toEqual({ kind: 'max_turns', turns: 3 });
    expect(ran).toHaveLength(3);
    const last = messages.at(-2)!.content as Array<{ type: string; id?: string }>;
    expect(resultsOf(messages.at(-1))[0]!.tool_use_id).toBe(last.find((b) => b.type === 'tool_use')!.id);
  });

  it('with two signal tools in one response answers both, runs only the first, and the first decides', async () => {
    const { model, ran, messages, options } = setup([
      reply(
        toolUse('finish', { summary: 'first' }, 'toolu_finish'),
        toolUse('idle', {}, 'toolu_idle'),
        toolUse('echo', { text: 'late' }, 'toolu_echo'),
      ),
    ]);
    const result = await runLoop(options);
    model.assertDone();
    expect(result.outcome).toEqual({ kind: 'transition', tool: 'finish', input: { summary: 'first' }, artifacts: { summary: 'first' }, result: 'first' });
    expect(ran).toEqual(['finish']);
    const answers = resultsOf(messages.at(-1));
    expect(answers.map((a) => a.tool_use_id)).toEqual(['toolu_finish', 'toolu_idle', 'toolu_echo']);
    expect(answers[0]).toEqual({ type: 'tool_result', tool_use_id: 'toolu_finish', content: 'Finished.' });
    for (const answer of answers.slice(1)) {
      expect(answer.is_error).toBe(true);
      expect(answer.content).toContain('finish already ended this task');
    }
  });

  it('ends as aborted when the signal fires during a model call', async () => {
    const controller = new AbortController();
    const { model, options } = setup([
      (_call, request) => {
        queueMicrotask(() => controller.abort(new Error('lead said stop')));
        return hangUntilAborted(request.signal);
      },
    ]);
    options.ctx = loopContext(root, controller.signal);
    const result = await runLoop(options);
    expect(result.outcome).toEqual({ kind: 'aborted', reason: 'lead said stop' });
    expect(model.requests).toHaveLength(1);
  });

  describe('compaction', () => {
    function compacting(model: FakeModel, budget: number): Partial<LoopOptions> {
      return {
        tokenBudget: budget,
        compact: (current) =>
          compactConversation({
            model,
            messages: current,
            identity: identityMessages('eng', 'engineer', TEAM),
            taskPrompt: TASK,
            agent: { name: 'eng', role: 'engineer', stage: null },
          }),
      };
    }

    function expectCompacted(model: FakeModel, summary: string) {
      const summarise = model.requests.find((call) => call.agent?.purpose === 'compaction');
      expect(summarise).toBeDefined();
      expect(summarise!.tools).toEqual([]);
      expect(summarise!.system).toMatch(/summari[sz]e/i);
      const after = model.requests[summarise!.index + 1]!;
      expect(after.agent?.purpose).not.toBe('compaction');
      expect(after.messages).toHaveLength(3);
      expect(after.messages[0]).toEqual({ role: 'user', content: identityText('eng', 'engineer') });
      expect(after.messages[1]!.role).toBe('assistant');
      expect(typeof after.messages[1]!.content).toBe('string');
      const opening = after.messages[2]!.content as string;
      expect(opening.startsWith(TASK)).toBe(true);
      expect(opening).toContain(`<progress-summary>\n${summary}\n</progress-summary>`);
      return { summarise, after };
    }

    it('tells the summary call on the event stream as a model_call of purpose compaction, between the turns', async () => {
      const emitted: EventInput[] = [];
      const built = setup([reply(toolUse('echo', { text: 'x'.repeat(3_000) }, 'toolu_long')), 'SUMMARY: echoed x.', 'Finished.'], { events: { emit: (event) => emitted.push(event) } });
      await runLoop({
        ...built.options,
        tokenBudget: 500,
        compact: (current) =>
          compactConversation({ model: built.model, messages: current, identity: identityMessages('eng', 'engineer', TEAM), taskPrompt: TASK, agent: { name: 'eng', role: 'engineer', stage: null, task: 7 }, events: { emit: (event) => emitted.push(event) }, pipeline: 3 }),
      });
      const calls = emitted.filter((event) => event.type === 'model_call');
      expect(calls.map((event) => event.type === 'model_call' && event.purpose)).toEqual(['turn', 'compaction', 'turn']);
      const summary = calls[1]!;
      expect(summary).toMatchObject({ agent: 'eng', role: 'engineer', task: 7, pipeline: 3, text: 'SUMMARY: echoed x.', model: built.model.id });
      expect(summary.type === 'model_call' && summary.inputTokens).toBeGreaterThan(0);
    });

    it('past the token budget asks the model for a summary, then reopens with identity, ack, task and summary', async () => {
      const long = 'x'.repeat(3_000);
      const built = setup([
        reply(toolUse('echo', { text: long }, 'toolu_long')),
        (call) => {
          expect(call.messages).toHaveLength(1);
          return 'SUMMARY: echoed a long line of x.';
        },
        'Finished after compaction.',
      ]);
      const result = await runLoop({ ...built.options, ...compacting(built.model, 500) });

      built.model.assertDone();
      expect(result.outcome).toEqual({ kind: 'end_turn', text: 'Finished after compaction.' });
      const { summarise } = expectCompacted(built.model, 'SUMMARY: echoed a long line of x.');
      // The work log handed to the summariser holds the call and its (real) result, not the opening.
      const log = summarise!.messages[0]!.content as string;
      expect(log).toContain('[called echo');
      expect(log).toContain('echo: xxx');
      expect(log).not.toContain('<identity>');
      // The loop's own conversation was replaced in place.
      expect(built.messages).toHaveLength(4);
      expect(built.messages[0]).toEqual({ role: 'user', content: identityText('eng', 'engineer') });
    });

    it('also compacts when the provider reports more input tokens than the budget', async () => {
      const built = setup([
        { content: [toolUse('echo', { text: 'short' })], stopReason: 'tool_use', usage: { inputTokens: 9_000, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 } },
        'SUMMARY: one short echo.',
        'done',
      ]);
      await runLoop({ ...built.options, ...compacting(built.model, 2_000) });
      built.model.assertDone();
      expectCompacted(built.model, 'SUMMARY: one short echo.');
    });

    it('a second compaction keeps what the first one summarised', async () => {
      const built = setup([
        reply(toolUse('echo', { text: 'a'.repeat(3_000) })),
        'SUMMARY-A: wrote config.json with port 8080.',
        reply(toolUse('echo', { text: 'b'.repeat(3_000) })),
        'SUMMARY-B: ran the tests, two failed.',
        'done',
      ]);
      await runLoop({ ...built.options, ...compacting(built.model, 500) });
      built.model.assertDone();
      const [, second] = built.model.requests.filter((call) => call.agent?.purpose === 'compaction');
      // The summariser can only keep what it is shown: the earlier summary must be part of its input,
      // or the conversation after the second compaction must still carry it.
      const shown = JSON.stringify(second!.messages);
      const reopened = JSON.stringify(built.model.requests.at(-1)!.messages);
      expect(shown + reopened).toContain('SUMMARY-A');
    });

    it('a message injected into the opening turn survives compaction', async () => {
      let injected = false;
      const built = setup([reply(toolUse('echo', { text: 'c'.repeat(3_000) })), 'SUMMARY: echoed.', 'done'], {
        beforeTurn: async () => {
          if (injected) return {};
          injected = true;
          return { inject: 'New messages:\n[message] from lead: use port 8080, not 3000' };
        },
      });
      await runLoop({ ...built.options, ...compacting(built.model, 500) });
      built.model.assertDone();
      expect(JSON.stringify(built.model.requests[0]!.messages)).toContain('use port 8080');
      const summarise = built.model.requests.find((call) => call.agent?.purpose === 'compaction')!;
      const shown = JSON.stringify(summarise.messages);
      const reopened = JSON.stringify(built.model.requests.at(-1)!.messages);
      expect(shown + reopened).toContain('use port 8080');
    });

    it('does not compact below the budget', async () => {
      const built = setup([reply(toolUse('echo', { text: 'short' })), 'done']);
      await runLoop({ ...built.options, ...compacting(built.model, 50_000) });
      built.model.assertDone();
      expect(built.model.requests.every((call) => call.agent?.purpose !== 'compaction')).toBe(true);
    });
  });

  it('says every modelWaitNoteMs that it still waits for a model call that has not answered, and stops saying it once it has', async () => {
    const notes: string[] = [];
    let heard: () => void = () => undefined;
    const twice = new Promise<void>((resolve) => (heard = resolve));
    const events = {
      emit(input: { type: string; text?: string }) {
        if (input.type !== 'note') return;
        notes.push(input.text!);
        if (notes.length === 2) heard();
      },
    };
    // The model answers once the loop has said twice that it waits; the interval is the test's to move.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      let asked: () => void = () => undefined;
      const calling = new Promise<void>((resolve) => (asked = resolve));
      const built = setup([async () => (asked(), await twice, [text('Done waiting.')])], { events, modelWaitNoteMs: 30_000 });
      const running = runLoop(built.options);
      await calling;
      vi.advanceTimersByTime(60_000);
      const result = await running;
      expect(result.outcome).toEqual({ kind: 'end_turn', text: 'Done waiting.' });
      expect(notes).toEqual([expect.stringMatching(/^still waiting for the model \(\d+ s so far\)$/), expect.stringMatching(/^still waiting for the model/)]);
      // Answered: said no more.
      vi.advanceTimersByTime(120_000);
      expect(notes).toHaveLength(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it("a call a hook refuses is said with the hook's reason, once: a hook that gave none says so", async () => {
    const emitted: EventInput[] = [];
    for (const [reason, summary, answer] of [
      ['no shell in this project', 'blocked by a hook: no shell in this project', 'Blocked by a hook: no shell in this project'],
      [NO_REASON, 'blocked by a hook: no reason given', 'Blocked by a hook: no reason given'],
    ] as const) {
      emitted.length = 0;
      const gate = { before: async () => reason, after: async () => null };
      const { model, ran, options } = setup([reply(toolUse('echo', { text: 'a' }, 'toolu_g')), 'ok.'], { gate, events: { emit: (event) => emitted.push(event) } });
      await runLoop(options);
      expect(ran).toEqual([]);
      expect(resultsOf(model.requests[1]!.messages.at(-1))[0]).toMatchObject({ content: answer, is_error: true });
      expect(emitted.find((event) => event.type === 'tool_call')).toMatchObject({ outcome: 'hook_blocked', summary });
    }
  });

  it('counts refused turns in a row: a turn with a call that ran starts the count again', async () => {
    const built = setup([
      [toolUse('frobnicate', {})],
      [toolUse('echo', { text: 'a' })],
      [toolUse('frobnicate', {})],
      [toolUse('echo', { nope: 1 })],
      [toolUse('finish', { summary: 'done' })],
    ]);
    const result = await runLoop(built.options);
    expect(result.outcome.kind).toBe('transition');
    const stopped = setup([[toolUse('frobnicate', {})], [toolUse('echo', { text: 'a' })], [toolUse('frobnicate', {})], [toolUse('echo', { nope: 1 })], [toolUse('frobnicate', {}), toolUse('echo', {})]]);
    expect((await runLoop(stopped.options)).outcome).toEqual({ kind: 'refused', reason: "the model's tool calls were refused 3 turns in a row (last: Invalid arguments for echo: text: missing (a string is expected))" });
  });
});
