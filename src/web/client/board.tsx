import { useMemo, useState } from 'preact/hooks';
import { age, type Board, type Card } from './store.js';

const COLUMNS: Array<{ status: Card['status']; title: string }> = [
  { status: 'pending', title: 'Pending' },
  { status: 'in_progress', title: 'In progress' },
  { status: 'completed', title: 'Completed' },
  { status: 'failed', title: 'Failed' },
  { status: 'cancelled', title: 'Cancelled' },
];

/** Cards drawn per column: a 10,000-task board stays quick; filters reach the rest. */
const SHOWN = 150;

export function BoardPage({ board }: { board: Board }) {
  const [pipeline, setPipeline] = useState('');
  const [role, setRole] = useState('');
  const [status, setStatus] = useState('');
  const [text, setText] = useState('');
  const cards = useMemo(() => [...board.cards.values()].sort((a, b) => b.id - a.id), [board.version]);
  const roles = useMemo(() => [...new Set(cards.map((card) => card.role ?? 'general'))].sort(), [cards]);
  const wanted = cards.filter(
    (card) =>
      (!pipeline || String(card.pipeline) === pipeline.replace(/^#/, '')) &&
      (!role || (card.role ?? 'general') === role) &&
      (!status || card.status === status) &&
      (!text || card.subject.toLowerCase().includes(text.toLowerCase())),
  );
  const now = Date.now();
  // Tasks whose teammate waits for the person's answer.
  const asking = new Map((board.state?.questions ?? []).filter((question) => question.task !== null).map((question) => [question.task!, question.from]));
  return (
    <div>
      <div class="filters">
        <input placeholder="pipeline #" value={pipeline} onInput={(e) => setPipeline(e.currentTarget.value.trim())} data-testid="filter-pipeline" size={10} />
        <select value={role} onChange={(e) => setRole(e.currentTarget.value)} data-testid="filter-role">
          <option value="">every role</option>
          {roles.map((name) => (
            <option value={name}>{name}</option>
          ))}
        </select>
        <select value={status} onChange={(e) => setStatus(e.currentTarget.value)} data-testid="filter-status">
          <option value="">every status</option>
          {COLUMNS.map((column) => (
            <option value={column.status}>{column.title.toLowerCase()}</option>
          ))}
        </select>
        <input placeholder="subject contains…" value={text} onInput={(e) => setText(e.currentTarget.value)} size={24} />
        <span class="muted">
          {wanted.length} of {cards.length} tasks
        </span>
      </div>
      <div class="columns">
        {COLUMNS.map((column) => {
          const inColumn = wanted.filter((card) => card.status === column.status);
          return (
            <div class="column" data-testid={`column-${column.status}`}>
              <h2>
                {column.title} <span class="count">{inColumn.length}</span>
              </h2>
              {inColumn.slice(0, SHOWN).map((card) => (
                <CardView card={card} now={now} asking={asking.get(card.id)} />
              ))}
              {inColumn.length > SHOWN && <p class="muted">{inColumn.length - SHOWN} more: filter to see them</p>}
            </div>
          );
        })}
      </div>
    </div>
  );
}

function CardView({ card, now, asking }: { card: Card; now: number; asking: string | undefined }) {
  return (
    <article class={`card ${card.status}`} data-testid={`card-${card.id}`} data-status={card.status} data-stage={card.stage ?? ''} title={card.result ?? ''}>
      <div class="card-top">
        <span class="id">#{card.id}</span>
        {card.stage && (
          <span class="stage">
            {card.stage}
            {card.revision > 0 ? ` r${card.revision}` : ''}
          </span>
        )}
        <span class="muted" title={card.since}>
          {age(card.since, now)}
        </span>
      </div>
      <a class="subject" href={`#/task/${card.id}`} title="the task: its description, result and history">
        {card.subject}
      </a>
      {asking && <div class="asking">{asking} waits for your answer</div>}
      {card.result && <div class="why">{card.result}</div>}
      <div class="card-bottom">
        {card.pipeline !== null && <a href={`#/pipeline/${card.pipeline}`}>pipeline #{card.pipeline}</a>}
        <span class="muted">{card.owner ? `@${card.owner}` : (card.role ?? 'any role')}</span>
      </div>
    </article>
  );
}
