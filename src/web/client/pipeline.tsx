import { useEffect, useState } from 'preact/hooks';
import type { pipelineView } from '../views.js';
import { act, type Board, money, read } from './store.js';

type Detail = NonNullable<Awaited<ReturnType<typeof pipelineView>>>;

/** One pipeline: requirement, Q&A, criteria with their evidence, reviews by revision, cost per role, timeline, diff. */
export function PipelinePage({ id, board }: { id: number; board: Board }) {
  // Each read is kept with the pipeline it is of: moving to another pipeline never shows the last one's.
  const [loaded, setLoaded] = useState<{ id: number; detail: Detail | null; error: string } | null>(null);
  const [diff, setDiff] = useState<{ id: number; text: string } | null>(null);
  const [line, setLine] = useState('');
  // Read again when one of its cards (or its status) changes.
  const key = [...board.cards.values()].filter((card) => card.pipeline === id).map((card) => `${card.id}:${card.status}:${card.updatedAt}`).join(',');
  useEffect(() => {
    setLine('');
    // A refresh that fails (the server stopped after the last change) keeps what was read of this pipeline.
    read<Detail>(`/api/pipelines/${id}`).then(
      (fresh) => setLoaded({ id, detail: fresh, error: '' }),
      (failure: Error) => setLoaded((was) => ({ id, detail: was?.id === id ? was.detail : null, error: failure.message })),
    );
  }, [id, key]);
  const detail = loaded?.id === id ? loaded.detail : null;
  const error = loaded?.id === id ? loaded.error : '';
  // A merged or discarded branch is gone: there is no diff to read.
  const open = detail?.repository === true && !detail.branch?.outcome;
  useEffect(() => {
    if (open) read<{ diff: string }>(`/api/pipelines/${id}/diff`).then((reply) => setDiff({ id, text: reply.diff }), () => setDiff(null));
  }, [id, open, detail?.status]);
  if (!detail) return error ? <p class="bad">{error}</p> : <p class="muted">Reading pipeline #{id}…</p>;
  const outcome = detail.branch?.outcome ?? null;
  // The status as the live feed last told it: it moves even when the evidence cannot be read again.
  const status = board.pipelines.get(id)?.status ?? detail.status;
  const run = (what: string) => {
    // Cancelling stops its teammates; discarding removes the branch: asked once.
    if ((what === 'cancel' || what === 'discard') && !confirm(what === 'cancel' ? `Cancel pipeline #${id}? Its open tasks stop.` : `Discard pipeline #${id}'s worktree and branch?`)) return Promise.resolve();
    return act(`/api/pipelines/${id}/${what}`).then(setLine, (failure: Error) => setLine(failure.message));
  };
  return (
    <div class="pipeline" data-testid="pipeline">
      <h2>
        Pipeline #{id} <span class={`status ${status}`} data-testid="pipeline-status">{status}</span>
        {detail.reason && <span class="muted"> — {detail.reason}</span>}
      </h2>
      <div class="buttons">
        {status === 'active' && <button onClick={() => void run('cancel')}>Cancel</button>}
        {(status === 'failed' || status === 'cancelled') && <button onClick={() => void run('retry')}>Retry</button>}
        {open && status === 'approved' && <button onClick={() => void run('merge')}>Merge</button>}
        {open && <button onClick={() => void run('discard')}>Discard branch</button>}
        {line && <span class="line" data-testid="action-line">{line}</span>}
      </div>
      {detail.branch && (
        <p class="branch" data-testid="branch">
          branch {detail.branch.name} from {detail.branch.base.slice(0, 12)}
          {outcome?.action === 'merged'
            ? outcome.noChange
              ? ` · its change was already in ${outcome.into ?? 'the base'}`
              : ` · merged into ${outcome.into ?? 'the base'}${outcome.commit ? ` at ${outcome.commit.slice(0, 12)}` : ''}`
            : outcome?.action === 'discarded'
              ? ' · discarded'
              : detail.branch.committedNothing
                ? ' · nothing to commit: the base already holds the reviewed files'
                : detail.branch.commit
                  ? ` · commit ${detail.branch.commit.slice(0, 12)}`
                  : ''}
        </p>
      )}
      <h3>Requirement</h3>
      <p class="requirement">{detail.requirement}</p>
      {detail.summary && <p>{detail.summary}</p>}
      {detail.qa.length > 0 && (
        <>
          <h3>Questions and answers</h3>
          <dl class="qa">
            {detail.qa.map((entry) => (
              <>
                <dt>{entry.question}</dt>
                <dd>
                  {entry.answer} <span class="muted">— {entry.by}</span>
                </dd>
              </>
            ))}
          </dl>
        </>
      )}
      <h3>Acceptance criteria</h3>
      {detail.criteria.length === 0 && <p class="muted">None recorded yet.</p>}
      <ul class="criteria" data-testid="criteria">
        {detail.criteria.map((criterion) => (
          <li>
            <b>{criterion.id}</b> {criterion.criterion} <span class="muted">verify: {criterion.verify}</span>
            {criterion.verdict && <div class={criterion.verdict.met ? 'good' : 'bad'}>{criterion.verdict.met ? 'met' : 'not met'}: {criterion.verdict.evidence}</div>}
          </li>
        ))}
      </ul>
      <h3>Reviews</h3>
      {detail.reviews.length === 0 && <p class="muted">Not reviewed yet.</p>}
      {detail.reviews.map((review) => (
        <section class="review" data-testid={`review-${review.revision}`}>
          <h4>
            Revision {review.revision} (task #{review.task}): <span class={review.verdict === 'approved' ? 'good' : 'bad'}>{review.verdict ?? review.status}</span>
          </h4>
          {review.comment && <p>{review.comment}</p>}
          {review.reports.length > 0 && (
            <p>
              {review.reports.map((report) => (
                <span class={`report ${report.ok === false ? 'bad' : 'good'}`} title={report.sha256 ?? ''}>
                  {report.kind} {report.ok === false ? 'failed' : 'ok'} ({report.file})
                </span>
              ))}
            </p>
          )}
          {review.issues.length > 0 && (
            <ul class="issues">
              {review.issues.map((issue) => (
                <li>
                  <span class={`severity ${issue.severity}`}>{issue.severity}</span> {issue.text} {issue.criterion && <span class="muted">({issue.criterion})</span>}
                </li>
              ))}
            </ul>
          )}
          {review.checks.map((check) => (
            <details class="check" data-testid={`check-${check.id}`}>
              <summary>
                <b>{check.id}</b> {check.language}: <span class={check.ok ? 'good' : 'bad'}>{check.ok ? 'passed' : 'failed'}</span> exit {String(check.exitCode)}{' '}
                <span class="muted" title={`sha256 ${check.sha256}`}>on {check.sha256.slice(0, 12)}</span>
              </summary>
              <pre>{check.code}</pre>
              <pre class="output">{check.output}</pre>
            </details>
          ))}
        </section>
      ))}
      <h3>Tokens and cost per role</h3>
      <table>
        <thead>
          <tr>
            <th>role</th>
            <th>calls</th>
            <th>input</th>
            <th>output</th>
            <th>cost</th>
          </tr>
        </thead>
        <tbody>
          {detail.usage.map((row) => (
            <tr>
              <td>{row.role}</td>
              <td>{row.calls}</td>
              <td>{row.inputTokens}</td>
              <td>{row.outputTokens}</td>
              <td>{money(row.cost)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {open && diff?.id === id && (
        <>
          <h3>Branch diff</h3>
          <pre class="diff" data-testid="diff">
            {diff.text.split('\n').map((text) => (
              <div class={text.startsWith('+') ? 'add' : text.startsWith('-') ? 'del' : text.startsWith('@@') ? 'hunk' : ''}>{text}</div>
            ))}
          </pre>
        </>
      )}
      <h3>Timeline</h3>
      <ol class="timeline" data-testid="timeline">
        {detail.timeline.map((entry) => (
          <li>
            <span class="muted">{new Date(entry.ts).toLocaleTimeString()}</span> <b>{entry.agent ?? ''}</b> {entry.text}
          </li>
        ))}
      </ol>
    </div>
  );
}
