import { z } from 'zod';
import { defineTool, toolError } from './tool.js';

export const saveRequirementTool = defineTool({
  name: 'save_requirement',
  description: 'Record one requirement as a key/value pair (e.g. key "file_types", value "images → Images/ …"). Saving a key again replaces it.',
  inputSchema: z.object({
    key: z.string().min(1).max(80).describe('short snake_case name'),
    value: z.string().min(1).describe('the requirement'),
  }),
  async run({ key, value }, ctx) {
    if (!ctx.task) return toolError('no requirements task is claimed');
    await ctx.record('saved', `${key} = ${value}`, (artifacts) => ({
      requirements: { ...(artifacts.requirements ?? {}), [key]: value },
    }));
    return { content: `Saved requirement '${key}'.` };
  },
});
