import { z } from 'zod';
import { defineTool } from '../tool.js';
import type { LeadServices } from './services.js';

export const listTeammatesTool = (lead: LeadServices) =>
  defineTool({
    name: 'list_teammates',
    description: 'List the team: name, role, status and current task of every member.',
    inputSchema: z.object({}),
    async run() {
      const config = lead.team();
      const lines = config.members.map(
        (m) => `${m.name} (${m.role}): ${m.status}${m.task ? ` #${m.task}` : ''}${m.reason ? ` — ${m.reason}` : ''}`,
      );
      return { content: `Team ${config.team} (lead: ${config.lead})\n${lines.join('\n') || 'no members'}` };
    },
  });
