/**
 * warmRoleTools: a teammate, once idle, loads what its role's tools load on their first run. Each
 * tool of the role's stages is warmed once; other roles' tools are not; a failing warm-up is left
 * for the tool's first real run to report.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BUILTIN_REGISTRY } from '../../src/core/stages/stage-registry.js';
import { defineTool, type ToolDefinition } from '../../src/core/tools/tool.js';
import { stageTools, warmRoleTools } from '../../src/core/tools/registry.js';
import { testerStage } from '../fixtures/tester-stage/index.js';

function counted(name: string, warm: () => Promise<unknown>): ToolDefinition & { warmed: number } {
  const tool: ToolDefinition & { warmed: number } = {
    warmed: 0,
    ...(defineTool({ name, description: name, inputSchema: z.object({}), run: async () => ({ content: 'ok' }) }) as ToolDefinition),
  };
  tool.warm = async () => {
    tool.warmed++;
    return warm();
  };
  return tool;
}

describe('warmRoleTools', () => {
  it("warms each tool of the role's stages once, and no other role's", async () => {
    const report = counted('report_test_run', async () => undefined);
    const broken = counted('flaky_probe', () => Promise.reject(new Error('not installed')));
    const stages = BUILTIN_REGISTRY.with({ ...testerStage, tools: [...testerStage.tools, 'flaky_probe'], ownTools: [report, broken] });
    await warmRoleTools('analyst', stages);
    expect([report.warmed, broken.warmed]).toEqual([0, 0]);
    // A warm-up that fails does not fail the teammate: the first real run reports it.
    await expect(warmRoleTools('tester', stages)).resolves.toBeUndefined();
    expect([report.warmed, broken.warmed]).toEqual([1, 1]);
  });

  it('the built-in tools that start processes or load modules on first use can be warmed, and warm without error', async () => {
    const reviewer = stageTools('review').filter((tool) => tool.warm).map((tool) => tool.name);
    expect(reviewer).toEqual(expect.arrayContaining(['run_linter', 'run_tests', 'analyze_complexity', 'run_check']));
    expect(stageTools('implementation').filter((tool) => tool.warm).map((tool) => tool.name)).toContain('bash');
    for (const tool of [...stageTools('review'), ...stageTools('implementation')]) await tool.warm?.();
  });
});
