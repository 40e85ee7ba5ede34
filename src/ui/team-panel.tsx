import { Box, Text } from 'ink';
import Spinner from 'ink-spinner';
import type { Task } from '../core/board/schemas.js';
import type { ShownMember } from '../core/lead/lead-api.js';
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

export function TeamPanel({
  members,
  tasks,
  lead,
  spend = {},
  rejected = {},
  starting = false,
}: {
  members: readonly ShownMember[];
  tasks: ReadonlyMap<number, Task>;
  lead: string;
  spend?: Readonly<Record<string, string>>;
  rejected?: Readonly<Record<string, number>>;
  starting?: boolean;
}) {
  return (
    <Box flexDirection="column" borderStyle="round" borderColor="gray" paddingX={1}>
      <Text>
        <Text bold>Team</Text>
        <Text dimColor> lead: {lead}</Text>
        {rejected[lead] ? <Text color="red">{rejectedNote(rejected[lead])}</Text> : null}
        {spend[''] ? <Text dimColor> · spent {spend['']}</Text> : null}
      </Text>
      {members.length === 0 ? <Text dimColor>{starting ? 'Starting the team…' : 'No teammates — /spawn <name> <role>'}</Text> : null}
      {members.map((member) => (
        <Box key={member.name}>
          <Box width={2} flexShrink={0}>{member.status === 'working' ? <Text color="yellow"><Spinner type="dots" /></Text> : <Text> </Text>}</Box>
          <Text wrap="truncate-end">
            <Text bold>{member.name}</Text>
            <Text dimColor> ({member.role}) </Text>
            <Text color={STATUS_COLORS[member.status]}>{member.status}</Text>
            {spend[member.name] ? <Text dimColor> [{spend[member.name]}]</Text> : null}
            {rejected[member.name] ? <Text color="red">{rejectedNote(rejected[member.name])}</Text> : null}
            <Text>{doing(member, tasks)}</Text>
          </Text>
        </Box>
      ))}
    </Box>
  );
}
