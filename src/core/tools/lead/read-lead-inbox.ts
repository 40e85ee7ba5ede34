import { z } from 'zod';
import { formatMessages } from '../read-inbox.js';
import { defineTool } from '../tool.js';
import type { LeadServices } from './services.js';

export const readLeadInboxTool = (lead: LeadServices) =>
  defineTool({
    name: 'read_inbox',
    description: "Read (and clear) the lead's unread messages: pipeline updates, plan requests, teammates' messages.",
    inputSchema: z.object({}),
    async run() {
      return { content: formatMessages(lead.takeUnread()) };
    },
  });
