import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_TEAMMATE_SETTINGS, type TeammateSettings } from '../agent/settings.js';
import { type LeadHand, LEAD_HANDS } from '../config/project-config.js';
import { containment, hiddenStartDir, Sandbox } from '../exec/sandbox.js';
import { bashTool } from '../tools/bash.js';
import { claimTaskTool } from '../tools/claim-task.js';
import { completeTaskTool } from '../tools/complete-task.js';
import { editFileTool } from '../tools/edit-file.js';
import { failTaskTool } from '../tools/fail-task.js';
import { idleTool } from '../tools/idle.js';
import { readFileTool } from '../tools/read-file.js';
import type { ToolDefinition } from '../tools/tool.js';
import { writeFileTool } from '../tools/write-file.js';
import { TRUSTED_FILES } from '../config/trusted-files.js';

/**
 * The board's own entries in its folder: never the lead's to read, write or run code against. The
 * config among them: its hooks run with the person's rights, outside any sandbox.
 */
const BOARD_ENTRIES = ['.tasks', '.team', '.autoteam', ...TRUSTED_FILES];

const HANDS: Record<LeadHand, ToolDefinition> = {
  bash: bashTool as ToolDefinition,
  read_file: readFileTool as ToolDefinition,
  write_file: writeFileTool as ToolDefinition,
  edit_file: editFileTool as ToolDefinition,
};

/** Where the lead works with its own hands, and how: the same sandbox, limits and environment as a teammate. */
export interface LeadWorkplace {
  /** The lead's folder: the repository's checkout in repository mode, else the board's folder. */
  folder: string;
  /** The board's entries inside it, relative to it: refused by the file tools, hidden from bash. */
  offLimits: string[];
  sandbox: Sandbox;
  limits: { commandTimeoutMs: number; maxOutputChars: number };
}

export function leadWorkplace(rootDir: string, repositoryTop: string | null, settings: Partial<TeammateSettings> = {}): LeadWorkplace {
  const folder = path.resolve(repositoryTop ?? rootDir);
  const board = path.resolve(rootDir);
  const masked = [...new Set([...BOARD_ENTRIES.map((name) => path.join(board, name)), path.join(folder, '.env')])];
  // autoteam's trusted files, where it reads them when it starts (the board's folder) and in the lead's folder.
  const guarded = [...new Set(TRUSTED_FILES.flatMap((name) => [path.join(board, name), path.join(folder, name)]))];
  const offLimits = [...new Set([...masked, ...guarded])].map((entry) => path.relative(folder, entry)).filter((rel) => rel && !rel.startsWith('..') && !path.isAbsolute(rel));
  const policy = { ...DEFAULT_TEAMMATE_SETTINGS.sandbox, ...settings.sandbox };
  fs.mkdirSync(folder, { recursive: true });
  // Its HOME and TMPDIR: in the board's workspace/ (kept out of git), not in the person's folder.
  const scratch = path.join(board, 'workspace', 'lead');
  fs.mkdirSync(scratch, { recursive: true });
  const sandbox = new Sandbox(
    {
      workspace: folder,
      // The start folder as for every teammate, and the board when it is not the lead's folder itself.
      hidden: [...hiddenStartDir(), board],
      masked,
      guarded,
      scratch,
      network: policy.network.includes('*') || policy.network.includes('lead'),
      limits: policy.limits,
      passEnv: policy.passEnv,
    },
    policy.mode === 'off' ? { kind: 'none', reason: 'turned off (--sandbox off)' } : containment(),
  );
  return {
    folder,
    offLimits,
    sandbox,
    limits: {
      commandTimeoutMs: settings.commandTimeoutMs ?? DEFAULT_TEAMMATE_SETTINGS.commandTimeoutMs,
      maxOutputChars: settings.maxOutputChars ?? DEFAULT_TEAMMATE_SETTINGS.maxOutputChars,
    },
  };
}

/**
 * The lead's own tools besides its team tools, as in the lesson: its file and shell tools
 * (`lead.tools` in autoteam.config.json; all four by default), `claim_task` and `idle`, and, while it
 * works a task it claimed, `complete_task` and `fail_task`.
 */
export function leadHands(hands: readonly LeadHand[] = LEAD_HANDS, working = false): ToolDefinition[] {
  const tools = LEAD_HANDS.filter((hand) => hands.includes(hand)).map((hand) => HANDS[hand]);
  return [...tools, claimTaskTool as ToolDefinition, idleTool as ToolDefinition, ...(working ? [completeTaskTool as ToolDefinition, failTaskTool as ToolDefinition] : [])];
}
