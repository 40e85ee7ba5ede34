import { Box, Text } from 'ink';
import Spinner from 'ink-spinner';
import type { Task } from '../core/board/schemas.js';
import type { ShownMember } from '../core/lead/lead-api.js';
import { shownStatus } from '../frontend/format.js';
import { printable } from '../frontend/printable.js';

const STATUS_COLORS: Record<ShownMember['status'], string> = {
  starting: 'cyan',
  working: 'yellow',
  idle: 'green',
  waiting: 'magenta',
  shutdown: 'gray',
  dead: 'red',
};

/** The reason first: on a narrow terminal the subject is what gets cut. */
function doing(member: ShownMember, tasks: ReadonlyMap<number, Task>): string {
  const task = member.task ? tasks.get(member.task) : undefined;
  const reason = member.reason ? ` — ${member.reason}` : '';
  const what = member.task ? `${reason ? ' ·' : ''} #${member.task}${task ? ` ${task.subject}` : ''}` : '';
  return printable(`${reason}${what}`);
}

/** `2 unreadable inbox lines`: moved aside by a drain of this member's inbox (the file or rows beside it hold them). */
function rejectedNote(count: number | undefined): string {
  return count ? ` ⚠ ${count} unreadable inbox line${count === 1 ? '' : 's'}` : '';
}

/** Those at work (working, waiting, starting, dead) before those at rest: what `rows` lines show, in the team's order, and a count by status of the rest. */
export function shownMembers(members: readonly ShownMember[], rows: number): { shown: ShownMember[]; rest: string | null } {
  if (members.length <= rows) return { shown: [...members], rest: null };
  const atRest = (member: ShownMember) => member.status === 'idle' || member.status === 'shutdown';
  const keep = new Set([...members.filter((member) => !atRest(member)), ...members.filter(atRest)].slice(0, Math.max(0, rows - 1)));
  const left = new Map<string, number>();
  for (const member of members) if (!keep.has(member)) left.set(shownStatus(member), (left.get(shownStatus(member)) ?? 0) + 1);
  const rest = `and ${members.length - keep.size} more: ${[...left].map(([status, count]) => `${count} ${status}`).join(', ')} (/team lists them)`;
  return { shown: members.filter((member) => keep.has(member)), rest };
}

export function TeamPanel({
  members,
  tasks,
  lead,
  spend = {},
  rejected = {},
  starting = false,
  rows = Number.POSITIVE_INFINITY,
}: {
  members: readonly ShownMember[];
  tasks: ReadonlyMap<number, Task>;
  lead: string;
  spend?: Readonly<Record<string, string>>;
  rejected?: Readonly<Record<string, number>>;
  starting?: boolean;
  /** Lines for the members: past it, those at rest are counted on one line instead. */
  rows?: number;
}) {
  const { shown, rest } = shownMembers(members, rows);
  return (
    <Box flexDirection="column" borderStyle="round" borderColor="gray" paddingX={1}>
      <Text>
        <Text bold>Team</Text>
        <Text dimColor> lead: {lead}</Text>
        {rejected[lead] ? <Text color="red">{rejectedNote(rejected[lead])}</Text> : null}
        {spend[''] ? <Text dimColor> · spent {spend['']}</Text> : null}
      </Text>
      {members.length === 0 ? <Text dimColor>{starting ? 'Starting the team…' : 'No teammates — /spawn <name> <role>'}</Text> : null}
      {shown.map((member) => (
        <Box key={member.name}>
          <Box width={2} flexShrink={0}>{member.status === 'working' ? <Text color="yellow"><Spinner type="dots" /></Text> : <Text> </Text>}</Box>
          <Text wrap="truncate-end">
            <Text bold>{member.name}</Text>
            <Text dimColor> ({member.role}) </Text>
            <Text color={STATUS_COLORS[member.status]}>{shownStatus(member)}</Text>
            {spend[member.name] ? <Text dimColor> [{spend[member.name]}]</Text> : null}
            {rejected[member.name] ? <Text color="red">{rejectedNote(rejected[member.name])}</Text> : null}
            <Text>{doing(member, tasks)}</Text>
          </Text>
        </Box>
      ))}
      {rest ? <Text dimColor wrap="truncate-end">{rest}</Text> : null}
    </Box>
  );
}
