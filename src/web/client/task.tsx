import { useEffect, useState } from 'preact/hooks';
import type { Task } from '../../core/board/schemas.js';
import { type Board, read } from './store.js';
import { counted } from '../../core/words.js';

/** One task as its file has it: what it asks, who holds it, its result and its history. General tasks have no pipeline page: this is theirs. */
export function TaskPage({ id, board }: { id: number; board: Board }) {
  const [loaded, setLoaded] = useState<{ id: number; task: Task | null; error: string } | null>(null);
  // Read again whenever its card moves.
  const card = board.cards.get(id);
  const key = card ? `${card.status}:${card.updatedAt}` : '';
  useEffect(() => {
    read<Task>(`/api/tasks/${id}`).then(
      (task) => setLoaded({ id, task, error: '' }),
      (failure: Error) => setLoaded((was) => ({ id, task: was?.id === id ? was.task : null, error: failure.message })),
    );
  }, [id, key]);
  const task = loaded?.id === id ? loaded.task : null;
  const error = loaded?.id === id ? loaded.error : '';
  if (!task) return error ? <p class="bad">{error}</p> : <p class="muted">Reading task #{id}…</p>;
  return (
    <div class="task" data-testid="task">
      <h2>
        Task #{task.id} <span class={`status ${task.status}`} data-testid="task-status">{task.status}</span>
        {task.stage && <span class="muted"> · {task.stage}{task.revision > 0 ? ` revision ${task.revision}` : ''}</span>}
      </h2>
      <p>
        <b data-testid="task-subject">{task.subject}</b>
      </p>
      <p class="muted">
        {task.owner ? `held by ${task.owner}` : `for ${task.role ?? 'any role'}`}
        {task.pipeline !== null && (
          <>
            {' · '}
            <a href={`#/pipeline/${task.pipeline}`}>pipeline #{task.pipeline}</a>
          </>
        )}
        {task.attempts > 0 && ` · ${counted(task.attempts, 'attempt')} that did not finish`}
      </p>
      {task.description && (
        <>
          <h3>Description</h3>
          <pre data-testid="task-description">{task.description}</pre>
        </>
      )}
      {task.result && (
        <>
          <h3>Result</h3>
          <pre data-testid="task-result">{task.result}</pre>
        </>
      )}
      <h3>History</h3>
      <ol class="timeline" data-testid="task-history">
        {task.history.map((entry) => (
          <li>
            <span class="muted">{new Date(entry.at).toLocaleTimeString()}</span> <b>{entry.by}</b> {entry.event}
            {entry.detail ? `: ${entry.detail}` : ''}
          </li>
        ))}
      </ol>
    </div>
  );
}
