import { completeStageTool } from './complete-stage.js';
import type { Stage } from '../board/schemas.js';
import { COORDINATION_TOOL_NAMES } from '../stages/stage.js';
import { BUILTIN_REGISTRY, type StageRegistry } from '../stages/stage-registry.js';
import { addAcceptanceCriterionTool } from './add-acceptance-criterion.js';
import { analyzeComplexityTool } from './analyze-complexity.js';
import { approveCodeTool } from './approve-code.js';
import { askClarifyingQuestionTool } from './ask-clarifying-question.js';
import { bashTool } from './bash.js';
import { broadcastTool } from './broadcast.js';
import { claimTaskTool } from './claim-task.js';
import { completeRequirementsAnalysisTool } from './complete-requirements-analysis.js';
import { completeTaskTool } from './complete-task.js';
import { editFileTool } from './edit-file.js';
import { executeCodeTool } from './execute-code.js';
import { failTaskTool } from './fail-task.js';
import { idleTool } from './idle.js';
import { planApprovalTool } from './plan-approval.js';
import { readFileTool } from './read-file.js';
import { readInboxTool } from './read-inbox.js';
import { requestRevisionTool } from './request-revision.js';
import { runCheckTool } from './run-check.js';
import { runLinterTool } from './run-linter.js';
import { runTestsTool } from './run-tests.js';
import { saveRequirementTool } from './save-requirement.js';
import { sendMessageTool } from './send-message.js';
import { shutdownResponseTool } from './shutdown-response.js';
import { submitForReviewTool } from './submit-for-review.js';
import { type ToolDefinition, toolSpec } from './tool.js';
import { writeFileTool } from './write-file.js';

/** Every teammate tool by name. Lead tools live with the lead. */
export const TEAMMATE_TOOLS: ReadonlyMap<string, ToolDefinition> = new Map(
  (
    [
      sendMessageTool,
      readInboxTool,
      broadcastTool,
      idleTool,
      shutdownResponseTool,
      planApprovalTool,
      claimTaskTool,
      completeTaskTool,
      failTaskTool,
      bashTool,
      readFileTool,
      writeFileTool,
      editFileTool,
      executeCodeTool,
      askClarifyingQuestionTool,
      saveRequirementTool,
      addAcceptanceCriterionTool,
      completeRequirementsAnalysisTool,
      submitForReviewTool,
      runLinterTool,
      runTestsTool,
      analyzeComplexityTool,
      runCheckTool,
      requestRevisionTool,
      approveCodeTool,
      completeStageTool,
    ] as ToolDefinition[]
  ).map((tool) => [tool.name, tool]),
);

const GENERAL_TOOL_NAMES = [
  ...COORDINATION_TOOL_NAMES,
  'plan_approval',
  'claim_task',
  'complete_task',
  'fail_task',
  'bash',
  'read_file',
  'write_file',
  'edit_file',
] as const;

function pick(names: readonly string[], own: readonly ToolDefinition[] = []): ToolDefinition[] {
  return names.map((name) => {
    const tool = TEAMMATE_TOOLS.get(name) ?? own.find((candidate) => candidate.name === name);
    if (!tool) throw new Error(`tool registry has no '${name}'`);
    return tool;
  });
}

/**
 * A stage's agent is offered its stage tools (as `stages` defines them) and the coordination tools,
 * nothing else, each once: a configured stage may name a tool twice, or one it is always offered, and
 * a request whose tools repeat a name is refused by the model's API.
 */
export function stageTools(stage: Stage, stages: StageRegistry = BUILTIN_REGISTRY): ToolDefinition[] {
  const definition = stages.get(stage);
  return pick([...new Set([...definition.tools, ...COORDINATION_TOOL_NAMES])], definition.ownTools);
}

/** Tools for a general (stage-less) task. */
export function generalTools(): ToolDefinition[] {
  return pick(GENERAL_TOOL_NAMES);
}

/**
 * Loads, once, what the tools of `role`'s stages load on their first run (execa, the linter's and
 * the test runner's modules, which python3 to start), and makes their specs (a JSON Schema each,
 * the first request's slowest step: 3–10 ms a teammate), so that a teammate's first task does not
 * wait for it. Failures are left to the first real run, which reports them.
 */
export async function warmRoleTools(role: string, stages: StageRegistry = BUILTIN_REGISTRY): Promise<void> {
  const own = stages.all().filter((stage) => stage.role === role || role === 'any').flatMap((stage) => stageTools(stage.stage, stages));
  const tools = new Set(role === 'any' ? [...own, ...generalTools()] : own);
  for (const tool of tools) {
    try {
      toolSpec(tool);
    } catch {
      // its first request reports it
    }
  }
  await Promise.all([...tools].map((tool) => tool.warm?.().catch(() => undefined)));
}
