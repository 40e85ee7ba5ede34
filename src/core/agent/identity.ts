import type { ModelMessage } from '../model/types.js';

export function identityBlock(name: string, role: string, team: string): string {
  return `<identity>You are '${name}', role: ${role}, team: ${team}. Continue your work.</identity>`;
}

/** The opening every conversation gets on resume and after compaction: identity, then an acknowledgement. */
export function identityMessages(name: string, role: string, team: string): ModelMessage[] {
  return [
    { role: 'user', content: identityBlock(name, role, team) },
    { role: 'assistant', content: `I am ${name}, the ${role} of team ${team}. Continuing.` },
  ];
}

export function hasIdentity(messages: readonly ModelMessage[]): boolean {
  const first = messages[0];
  return typeof first?.content === 'string' && first.content.startsWith('<identity>');
}
