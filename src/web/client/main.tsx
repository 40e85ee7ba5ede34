import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { BoardPage } from './board.js';
import { PipelinePage } from './pipeline.js';
import { Actions } from './actions.js';
import { type Board, follow } from './store.js';
import { TaskPage } from './task.js';
import { TeamPage } from './team.js';
import { counted } from '../../core/words.js';

/** Where the page is: `#/` the board, `#/team`, `#/pipeline/<id>`, `#/task/<id>`. */
function useRoute(): string {
  const [route, setRoute] = useState(location.hash.slice(1) || '/');
  useEffect(() => {
    const changed = () => setRoute(location.hash.slice(1) || '/');
    addEventListener('hashchange', changed);
    // The address can change between the first render and this effect: read it once more.
    changed();
    return () => removeEventListener('hashchange', changed);
  }, []);
  return route;
}

function App() {
  const [board, setBoard] = useState<Board | null>(null);
  useEffect(() => follow(setBoard), []);
  const route = useRoute();
  if (!board) return <p class="muted">Connecting…</p>;
  const state = board.state;
  const pipeline = /^\/pipeline\/(\d+)$/.exec(route);
  const task = /^\/task\/(\d+)$/.exec(route);
  const page = pipeline ? <PipelinePage id={Number(pipeline[1])} board={board} /> : task ? <TaskPage id={Number(task[1])} board={board} /> : route === '/team' ? <TeamPage board={board} /> : <BoardPage board={board} />;
  return (
    <>
      <header>
        <h1>autoteam</h1>
        <nav>
          <a href="#/" class={route === '/' ? 'on' : ''}>Board</a>
          <a href="#/team" class={route === '/team' ? 'on' : ''}>Team</a>
          {state && state.questions.length > 0 && (
            <a href="#questions" class="alert" data-testid="questions-waiting">
              {state.questions.length} question{state.questions.length === 1 ? '' : 's'} waiting
            </a>
          )}
        </nav>
        <span class="where" title={state?.board.location}>{state?.board.where}</span>
        <span class="leader" data-testid="leader">
          {state?.leader.state === 'none' ? 'no lead running' : state?.leader.state === 'here' ? 'lead: this process' : `lead: pid ${state?.leader.pid} on ${state?.leader.host}`}
        </span>
      </header>
      {board.ended && (
        <div class="banner warn" data-testid="ended">
          {board.ended}
        </div>
      )}
      {!board.connected && !board.ended && <div class="banner warn">The connection to autoteam web was lost; reconnecting…</div>}
      {state?.outage && (
        <div class="banner bad" data-testid="outage">
          The board is unreachable since {new Date(state.outage.since).toLocaleTimeString()} ({state.outage.message}). What is shown is the last state read.
        </div>
      )}
      {state && state.board.problems.length > 0 && <div class="banner warn">{counted(state.board.problems.length, 'task file')} could not be read: {state.board.problems.slice(0, 3).join('; ')}{state.board.problems.length > 3 ? `; and ${state.board.problems.length - 3} more (autoteam tasks lists them)` : ''}</div>}
      <main>
        <section class="content">{page}</section>
        <aside id="questions">
          <Actions board={board} />
        </aside>
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
