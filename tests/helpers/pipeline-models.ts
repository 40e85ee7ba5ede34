/**
 * Fake ModelClients for the pipeline tests.
 *
 * - `createModel(options)`: the factory a `{kind: 'module'}` ModelSpec loads in every worker thread
 *   (and in the lead): a misbehaving team, one behaviour per stage, chosen by the test. Each call is
 *   appended to `options.log` (JSON lines) so the test can see what the workers' models were sent.
 * - `StepModel`: an in-process scripted model that records every request and fails loudly on an
 *   unexpected or unused step (openai-agents-js `scriptedModel` style).
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import type { AssistantBlock, ModelClient, ModelMessage, ModelRequest, ModelResponse, ToolUseBlock } from '../../src/core/model/types.js';

export type StageBehaviour =
  /** requirements: save + complete; implementation: write + submit; review: approve. */
  | 'normal'
  /** Asks a new clarifying question every turn. */
  | 'always-ask'
  /** request_revision every time. */
  | 'always-reject'
  /** request_revision with the same blocker every time (its line number changes). */
  | 'always-block'
  /** Ends every turn with text only, never a signal. */
  | 'silent'
  /** Ends its first turn with text only; after the runtime's nudge, behaves normally. */
  | 'silent-once'
  /** Calls read_inbox forever (never a signal). */
  | 'spin'
  /** Calls a tool that does not exist, every turn. */
  | 'unknown-tool'
  /** Calls ask_clarifying_question with arguments its schema rejects, every turn. */
  | 'bad-args'
  /** Two turns of calls the runtime refuses, then the happy path. */
  | 'refused-twice';

export interface FakeTeamOptions {
  requirements?: StageBehaviour;
  implementation?: StageBehaviour;
  review?: StageBehaviour;
  /** JSON-lines file that receives `{agent, stage, purpose, messages, tools}` for every call. */
  log?: string;
}

export const NUDGE = /You have not finished this task\. Continue, and end it with/;
const FILE = 'main.py';
const PROGRAM = '"""Print a greeting."""\nprint("hello")\n';

const use = (name: string, input: Record<string, unknown>): ToolUseBlock => ({
  type: 'tool_use',
  id: `toolu_fake_${randomUUID().slice(0, 8)}`,
  name,
  input,
});
const text = (value: string): AssistantBlock => ({ type: 'text', text: value });

function toolTurns(messages: ModelMessage[]): number {
  return messages.filter((m) => m.role === 'assistant' && Array.isArray(m.content) && m.content.some((b) => b.type === 'tool_use')).length;
}

/** The revision in the task statement ("Task #4 [implementation, revision 1]: …"), 0 if none. */
function revisionOf(messages: ModelMessage[]): number {
  const first = messages.find((m) => m.role === 'user' && typeof m.content === 'string' && m.content.startsWith('Task #'));
  return Number(/^Task #\d+ \[\w+, revision (\d+)\]/.exec(typeof first?.content === 'string' ? first.content : '')?.[1] ?? 0);
}

function nudged(messages: ModelMessage[]): boolean {
  return messages.some((m) => m.role === 'user' && typeof m.content === 'string' && NUDGE.test(m.content));
}

/** The evidence-backed happy path: a criterion, a real lint and test run, then an approval citing them. */
function normal(stage: string, done: number, messages: ModelMessage[] = []): AssistantBlock[] {
  switch (stage) {
    case 'requirements':
      return done === 0
        ? [use('save_requirement', { key: 'goal', value: 'greet' }), use('add_acceptance_criterion', { criterion: 'prints hello', verify: 'run it' })]
        : [use('complete_requirements_analysis', { summary: 'one requirement' })];
    case 'implementation':
      // Each revision changes the file: an unchanged resubmission would be refused.
      return done === 0
        ? [use('write_file', { path: FILE, content: `${PROGRAM}# revision ${revisionOf(messages)}\n` })]
        : [use('submit_for_review', { file: FILE })];
    default:
      return done === 0
        ? [use('run_linter', { file: FILE }), use('run_tests', { file: FILE })]
        : [use('approve_code', { comment: 'fine', criteria: [{ id: 'AC1', met: true, evidence: 'the smoke run printed hello' }] })];
  }
}

export function decide(behaviour: StageBehaviour, stage: string, messages: ModelMessage[]): AssistantBlock[] {
  const done = toolTurns(messages);
  switch (behaviour) {
    case 'normal':
      return normal(stage, done, messages);
    case 'always-ask':
      return [use('ask_clarifying_question', { question: `Question number ${done + 1}: what else should I know?` })];
    case 'always-reject':
      if (stage !== 'review') return normal(stage, done, messages);
      return [use('request_revision', { issues: ['the reviewer is never satisfied'] })];
    case 'always-block':
      if (stage !== 'review') return normal(stage, done, messages);
      return [use('request_revision', { issues: [{ text: `main.py line ${revisionOf(messages) + 1} crashes on empty input`, severity: 'blocker' }] })];
    case 'silent':
      return [text('I think I am done.')];
    case 'silent-once':
      return nudged(messages) ? normal(stage, done, messages) : [text('I think I am done.')];
    case 'spin':
      return [use('read_inbox', {})];
    case 'unknown-tool':
      return [use('frobnicate', { how: 'hard' })];
    case 'bad-args':
      return [use('ask_clarifying_question', { nonsense: 1 })];
    case 'refused-twice': {
      const refused = messages.filter((m) => m.role === 'user' && Array.isArray(m.content) && m.content.some((b) => b.type === 'tool_result' && b.is_error)).length;
      return refused < 2 ? [use('frobnicate', {})] : normal(stage, done - 2, messages);
    }
  }
}

export function createModel(options: FakeTeamOptions = {}): ModelClient {
  return {
    id: 'fake-team',
    label: 'fake team model',
    async create(request: ModelRequest): Promise<ModelResponse> {
      const agent = request.agent ?? { name: '?', role: '?', stage: null };
      if (options.log) {
        fs.appendFileSync(
          options.log,
          `${JSON.stringify({ agent: agent.name, stage: agent.stage, purpose: agent.purpose ?? 'work', messages: request.messages, tools: request.tools.map((t) => t.name) })}\n`,
        );
      }
      let content: AssistantBlock[];
      if (agent.purpose === 'simulated_user') content = [text('Assume sensible defaults.')];
      else if (!agent.stage) content = [text('Nothing to do.')];
      else content = decide(options[agent.stage as 'requirements'] ?? 'normal', agent.stage, request.messages);
      return {
        content,
        stopReason: content.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn',
        usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 },
      };
    },
  };
}

export interface LoggedCall {
  agent: string;
  stage: string | null;
  purpose: string;
  messages: ModelMessage[];
  tools: string[];
}

export function readLog(file: string): LoggedCall[] {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as LoggedCall);
}

export type Step = AssistantBlock[] | ((request: ModelRequest) => AssistantBlock[]);

/** In-process scripted model: one step per call; an extra call throws, `assertDone` catches unused steps. */
export class StepModel implements ModelClient {
  readonly id = 'step-model';
  readonly label = 'step model';
  readonly requests: ModelRequest[] = [];
  private readonly steps: Step[];

  constructor(steps: Step[]) {
    this.steps = [...steps];
  }

  async create(request: ModelRequest): Promise<ModelResponse> {
    // Snapshot: the loop keeps appending to the same array.
    this.requests.push({ ...request, messages: structuredClone(request.messages) });
    const step = this.steps.shift();
    if (!step) throw new Error(`StepModel: unexpected call #${this.requests.length} (no step left)`);
    const content = typeof step === 'function' ? step(request) : step;
    return {
      content,
      stopReason: content.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn',
      usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
    };
  }

  assertDone(): void {
    if (this.steps.length) throw new Error(`StepModel: ${this.steps.length} step(s) never requested`);
  }
}

export { text as textBlock, use as toolUse };
