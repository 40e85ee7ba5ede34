import { age, type Board, money } from './store.js';

export function TeamPage({ board }: { board: Board }) {
  const state = board.state;
  if (!state) return <p class="muted">Reading the team…</p>;
  const offline = state.models.offline;
  return (
    <div>
      <h2>
        Team {state.team.name} <span class="muted">· its lead is named {state.team.lead}</span>
      </h2>
      <table class="team" data-testid="team">
        <thead>
          <tr>
            <th>member</th>
            <th>role</th>
            <th>model</th>
            <th>status</th>
            <th>task</th>
            <th>heartbeat</th>
            <th>health</th>
            <th>spend</th>
          </tr>
        </thead>
        <tbody>
          {state.team.members.map((member) => (
            <tr data-testid={`member-${member.name}`}>
              <td>{member.name}</td>
              <td>{member.role}</td>
              <td>{member.model}</td>
              <td>{member.status}</td>
              <td>{member.task ? `#${member.task}` : '—'}</td>
              <td>{member.heartbeatAgeMs === null ? '—' : `${age(new Date(Date.now() - member.heartbeatAgeMs).toISOString())} ago`}</td>
              <td class={member.alive ? 'good' : member.gone ? 'bad' : 'muted'} title={member.gone ?? member.reason ?? ''}>
                {member.alive ? 'alive' : member.gone ? `dead: ${member.gone}` : 'not running'}
              </td>
              <td>
                {member.spend.calls} calls · {(member.spend.inputTokens + member.spend.outputTokens).toLocaleString('en-US')} tok{offline || member.spend.cost == null ? '' : ` · ${money(member.spend.cost)}`}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="muted">
        In all: {state.spend.total.calls.toLocaleString('en-US')} model calls, {(state.spend.total.inputTokens + state.spend.total.outputTokens).toLocaleString('en-US')} tokens
        {offline ? ' (the offline model: no cost)' : state.spend.total.cost == null ? ' (no known price for its models)' : `, ${money(state.spend.total.cost)}`}. Models: {state.models.label}.
      </p>
      <h3>Recent events</h3>
      <ol class="timeline">
        {board.events.slice(-60).reverse().map((entry) => (
          <li>
            <span class="muted">{new Date(entry.ts).toLocaleTimeString()}</span> <b>{entry.agent ?? ''}</b> {entry.text}
          </li>
        ))}
      </ol>
    </div>
  );
}
