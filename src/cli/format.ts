import type { Member, Task } from '../core/board/schemas.js';

const MARKERS: Record<Task['status'], string> = {
  pending: '[ ]',
  in_progress: '[>]',
  completed: '[x]',
  failed: '[!]',
  cancelled: '[-]',
};

export function marker(task: Task): string {
  return MARKERS[task.status];
}

/** One board line as the lesson printed it: marker, id, subject, then stage/revision, owner, blockers. */
export function formatTaskLine(task: Task, width = 100): string {
  const stage = task.stage ? ` (${task.stage}${task.revision ? ` r${task.revision}` : ''})` : task.role ? ` (${task.role})` : '';
  const owner = task.owner ? ` @${task.owner}` : '';
  const blocked = task.blockedBy.length ? ` blocked by ${task.blockedBy.map((id) => `#${id}`).join(', ')}` : '';
  const head = `${marker(task)} #${task.id}: `;
  const tail = `${stage}${owner}${blocked}`;
  const room = Math.max(20, width - head.length - tail.length);
  const subject = task.subject.length > room ? `${task.subject.slice(0, room - 1)}…` : task.subject;
  return `${head}${subject}${tail}`;
}

export function formatBoard(tasks: readonly Task[]): string {
  if (tasks.length === 0) return 'No tasks.';
  return tasks.map((task) => formatTaskLine(task)).join('\n');
}

export function formatMember(member: Member, lead = false): string {
  const task = member.task ? ` #${member.task}` : '';
  const reason = member.reason ? ` — ${member.reason}` : '';
  return `${member.name} (${member.role}): ${member.status}${task}${reason}${lead ? ' [lead]' : ''}`;
}

export function formatDuration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}
