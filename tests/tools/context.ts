/** A hand-built ToolContext over a real board in a temp dir; `record` calls are collected, not written. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Artifacts, Mailbox, RequestStore, TaskBoard, TeamRegistry } from '../../src/core/board/index.js';
import { DEFAULT_LIMITS, Sandbox } from '../../src/core/exec/sandbox.js';
import type { ToolContext, ToolDefinition, ToolLimits, ToolOutcome } from '../../src/core/tools/tool.js';

export interface RecordedEvent {
  event: string;
  detail?: string;
}

export interface TestContext {
  ctx: ToolContext;
  root: string;
  workspace: string;
  records: RecordedEvent[];
  artifacts(): Artifacts;
  cleanup(): void;
}

export function makeToolContext(limits: Partial<ToolLimits> = {}): TestContext {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-tools-')));
  const workspace = path.join(root, 'workspace');
  fs.mkdirSync(workspace);
  const records: RecordedEvent[] = [];
  let artifacts: Artifacts = { requirements: { goal: 'kept untouched' } };
  const ctx: ToolContext = {
    agent: { name: 'engineer', role: 'engineer', team: 'test' },
    rootDir: root,
    workspace,
    sandbox: new Sandbox({ workspace, hidden: [root], network: false, limits: DEFAULT_LIMITS }),
    board: new TaskBoard(root),
    requests: new RequestStore(root),
    mailbox: new Mailbox(root),
    registry: new TeamRegistry(root),
    task: null,
    fence: null,
    signal: new AbortController().signal,
    limits: { commandTimeoutMs: 20_000, maxOutputChars: 4_000, ...limits },
    async record(event, detail, update) {
      records.push({ event, detail });
      if (update) artifacts = update(structuredClone(artifacts));
    },
    async waitForMessage() {
      return null;
    },
    log() {},
  };
  return { ctx, root, workspace, records, artifacts: () => artifacts, cleanup: () => fs.rmSync(root, { recursive: true, force: true }) };
}

/** Runs a tool the way the loop does: the input is parsed with the tool's schema first. */
export function call<T extends ToolDefinition>(tool: T, input: unknown, ctx: ToolContext): Promise<ToolOutcome> {
  return tool.run(tool.inputSchema.parse(input), ctx);
}
