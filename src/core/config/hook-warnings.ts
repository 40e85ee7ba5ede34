import { type HooksConfig, isPlainMatcher } from '../hooks/config.js';
import { LEAD_TOOL_NAMES } from '../tools/lead/names.js';
import { TEAMMATE_TOOLS } from '../tools/registry.js';
import { closestWord } from '../words.js';

/**
 * A hook whose matcher names only things that do not exist never runs: each such name is said at
 * start, with the nearest real one (`'bsh' is no tool's name … did you mean bash?`). A regular
 * expression, and an MCP tool (`mcp__…`, known only once its server starts), are taken as they are.
 */
export function hookMatcherWarnings(hooks: HooksConfig | undefined, stages: readonly string[]): string[] {
  const tools = [...new Set([...TEAMMATE_TOOLS.keys(), ...LEAD_TOOL_NAMES])];
  const targets: Record<string, { what: string; names: readonly string[] }> = {
    PreToolUse: { what: 'tool', names: tools },
    PostToolUse: { what: 'tool', names: tools },
    PipelineCompleted: { what: 'pipeline status', names: ['approved', 'failed', 'cancelled'] },
  };
  const warnings: string[] = [];
  for (const [event, groups] of Object.entries(hooks ?? {})) {
    const { what, names } = targets[event] ?? { what: 'stage', names: [...stages, 'general'] };
    (groups ?? []).forEach((group, i) => {
      if (!group.matcher || !isPlainMatcher(group.matcher)) return;
      for (const name of group.matcher.split('|')) {
        if (names.includes(name) || name.startsWith('mcp__')) continue;
        const near = closestWord(name, names);
        warnings.push(`hooks.${event}.${i}.matcher: '${name}' is no ${what}'s name, so it never matches${near ? ` (did you mean ${near}?)` : ` (one of: ${names.join(', ')})`}`);
      }
    });
  }
  return warnings;
}
