import { useState } from 'preact/hooks';
import { act, age, type Board } from './store.js';

/** The side panel: post a requirement, answer the teammates' questions, decide plans. */
export function Actions({ board }: { board: Board }) {
  const state = board.state;
  const [requirement, setRequirement] = useState('');
  const [line, setLine] = useState<{ text: string; ok: boolean } | null>(null);
  const [busy, setBusy] = useState(false);
  const post = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    try {
      setLine({ text: await act('/api/requirements', { text: requirement }), ok: true });
      setRequirement('');
    } catch (failure) {
      setLine({ text: (failure as Error).message, ok: false });
    } finally {
      setBusy(false);
    }
  };
  const nobody = state && state.leader.state === 'none' && !state.team.members.some((member) => member.alive);
  return (
    <div class="actions">
      <form onSubmit={(event) => void post(event)} data-testid="post-form">
        <h2>New requirement</h2>
        <textarea rows={4} value={requirement} onInput={(e) => setRequirement(e.currentTarget.value)} placeholder="Describe what you want built" data-testid="requirement" />
        <button type="submit" disabled={busy || !requirement.trim()} data-testid="post">
          Post
        </button>
        {nobody && <p class="muted">No lead or teammate is running on this board: a posted requirement waits until one starts (autoteam, or autoteam worker).</p>}
        {line && (
          <p class={line.ok ? 'line' : 'bad'} data-testid="post-line">
            {line.text}
          </p>
        )}
      </form>
      <h2>Questions {state && state.questions.length > 0 && <span class="count">{state.questions.length}</span>}</h2>
      {state?.questions.length === 0 && <p class="muted">No question is waiting.</p>}
      {state?.questions.map((question) => (
        <Question key={question.questionId} question={question} />
      ))}
      {state && state.plans.length > 0 && <h2>Plans to approve</h2>}
      {state?.plans.map((plan) => (
        <Plan key={plan.id} plan={plan} />
      ))}
    </div>
  );
}

function Question({ question }: { question: NonNullable<Board['state']>['questions'][number] }) {
  const [text, setText] = useState('');
  const [error, setError] = useState('');
  const [sent, setSent] = useState(false);
  const send = (event: Event) => {
    event.preventDefault();
    act(`/api/questions/${encodeURIComponent(question.questionId)}/answer`, { text }).then(
      () => {
        setText('');
        setSent(true);
      },
      (failure: Error) => setError(failure.message),
    );
  };
  return (
    <form class="question" onSubmit={send} data-testid={`question-${question.questionId}`}>
      <p>
        <b>{question.from}</b> asks{question.pipeline !== null && <a href={`#/pipeline/${question.pipeline}`}> (pipeline #{question.pipeline})</a>}{' '}
        <span class="muted">{age(question.at)} ago</span>
      </p>
      <p class="asked">{question.question}</p>
      <input value={text} onInput={(e) => setText(e.currentTarget.value)} placeholder="Your answer" data-testid="answer" />
      <button type="submit" disabled={!text.trim() || sent}>
        Answer
      </button>
      {sent && <p class="line">Sent to {question.from}.</p>}
      {error && <p class="bad">{error}</p>}
    </form>
  );
}

function Plan({ plan }: { plan: NonNullable<Board['state']>['plans'][number] }) {
  const [feedback, setFeedback] = useState('');
  const [error, setError] = useState('');
  const decide = (approve: boolean) => act(`/api/plans/${encodeURIComponent(plan.id)}`, { approve, feedback }).catch((failure: Error) => setError(failure.message));
  return (
    <div class="plan" data-testid={`plan-${plan.id}`}>
      <p>
        <b>{plan.from}</b> plans:
      </p>
      <pre>{plan.plan}</pre>
      <input value={feedback} onInput={(e) => setFeedback(e.currentTarget.value)} placeholder="Feedback (optional)" />
      <button onClick={() => void decide(true)}>Approve</button> <button onClick={() => void decide(false)}>Reject</button>
      {error && <p class="bad">{error}</p>}
    </div>
  );
}
