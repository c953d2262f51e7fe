import { useQuery } from '@tanstack/react-query';
import { Link, useNavigate, useParams } from 'react-router';
import {
  isCancellable,
  isRetryable,
  RUN_STATUS_LABELS,
  runQuery,
  runsQuery,
  useCancelRun,
  useRetryRun,
  type Run,
} from '../../features/runs/api';
import { workersQuery } from '../../features/workers/api';
import { useI18n } from '../../i18n';
import { Avatar, ErrorLine, Loading, Markdown } from '../../ui';
import type { TabProps } from '../../features/projects/types';

/** The name of each worker of the project (by id). */
function useWorkerNames(project: string) {
  const { t } = useI18n();
  const workers = useQuery(workersQuery(project));
  const map = new Map((workers.data?.workers ?? []).map((w) => [w.id, w.label]));
  return (id: number) => map.get(id) ?? t('Worker #{id}', { id });
}

/** Run history (newest first, refreshed while a run goes on), or one run's detail (`runs/:id`). */
export default function Runs({ project }: TabProps) {
  const { sub } = useParams();
  const id = Number(sub);
  if (sub && Number.isInteger(id) && id > 0) return <RunDetail project={project} id={id} />;
  return <RunList project={project} />;
}

function StatusBadge({ status }: { status: Run['status'] }) {
  const { t } = useI18n();
  return <span className={`status ${status}`}>{t(RUN_STATUS_LABELS[status] ?? status)}</span>;
}

function RunActions({ project, run, onRetried }: { project: string; run: Run; onRetried?: (id: number) => void }) {
  const { t } = useI18n();
  const cancel = useCancelRun(project);
  const retry = useRetryRun(project);
  return (
    <>
      {isCancellable(run.status) && (
        <button type="button" disabled={cancel.isPending} onClick={() => cancel.mutate(run.id)}>
          {t('Cancel')}
        </button>
      )}
      {isRetryable(run.status) && (
        <button
          type="button"
          disabled={retry.isPending}
          onClick={() => retry.mutate(run.id, { onSuccess: (r) => onRetried?.(r.run_id) })}
        >
          {t('Retry')}
        </button>
      )}
      <ErrorLine error={cancel.error ?? retry.error} />
    </>
  );
}

function RunList({ project }: { project: string }) {
  const { t, date } = useI18n();
  const runs = useQuery(runsQuery(project));
  const name = useWorkerNames(project);
  if (runs.isPending) return <Loading />;
  return (
    <div>
      <ErrorLine error={runs.error} />
      {!runs.data?.runs.length && <p className="muted">{t('No runs yet.')}</p>}
      <ul className="run-list">
        {runs.data?.runs.map((r) => (
          <li key={r.id} className="run-row">
            <div className="run-row-head">
              <Avatar name={name(r.worker_id)} size={22} />
              <Link to={`/projects/${project}/runs/${r.id}`}>
                {name(r.worker_id)} · {t('Run #{id}', { id: r.id })}
              </Link>
              <StatusBadge status={r.status} />
              <span className="muted">{date(r.created_at)}</span>
              <span className="run-row-actions">
                <RunActions project={project} run={r} />
              </span>
            </div>
            {r.error_message && <p className="error">{r.error_message}</p>}
            {r.reply && <Markdown text={r.reply} className="run-reply" />}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** A duration in ms as seconds (one decimal) or minutes. */
function useDuration() {
  const { t, number } = useI18n();
  return (ms: number | null) => {
    if (ms === null) return '—';
    if (ms < 60_000) return t('{s} s', { s: number(Math.round(ms / 100) / 10) });
    return t('{m} min {s} s', { m: Math.floor(ms / 60_000), s: Math.round((ms % 60_000) / 1000) });
  };
}

type ToolCall = Run['tool_calls'][number];

/** JSON text indented, or the text as it is when it is not whole JSON (an input summary cut at 200 characters). */
function indented(text: string) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/**
 * One tool call of a run, collapsed to its tool and input; opened, its input (monospace) and its result as the
 * service kept it (redacted, at most 4 KiB): JSON in monospace, other text as safe Markdown, in the error style
 * when the tool failed or the call was refused.
 */
function ToolCallCard({ call }: { call: ToolCall }) {
  const { t, number } = useI18n();
  const res = call.result;
  return (
    <li className={`tool-card run-tool${call.is_error ? ' failed' : ''}`}>
      <details>
        <summary>
          <code className="tool-name">{call.tool}</code>
          {call.is_error && <span className="error"> ({t('failed')})</span>}{' '}
          <span className="muted run-tool-brief">{call.summary}</span>
        </summary>
        <div className="run-tool-body">
          <h4>{t('Input')}</h4>
          <pre className="run-tool-json">{indented(call.summary)}</pre>
          <h4>{call.is_error ? t('Error') : t('Result')}</h4>
          {!res ? (
            <p className="muted">{t('This run did not keep the result of its tool calls.')}</p>
          ) : (
            <div className={`run-tool-result${call.is_error ? ' error' : ''}`}>
              {res.json || call.is_error ? (
                <pre className="run-tool-json">{res.preview}</pre>
              ) : (
                <Markdown text={res.preview} />
              )}
              {res.truncated && (
                <p className="muted">
                  {t('The first {shown} of {total} bytes.', {
                    shown: number(new TextEncoder().encode(res.preview).length),
                    total: number(res.bytes),
                  })}
                </p>
              )}
            </div>
          )}
        </div>
      </details>
    </li>
  );
}

function RunDetail({ project, id }: { project: string; id: number }) {
  const { t, date, number } = useI18n();
  const run = useQuery(runQuery(project, id));
  const name = useWorkerNames(project);
  const duration = useDuration();
  const navigate = useNavigate();
  if (run.isPending) return <Loading />;
  if (run.isError) return <ErrorLine error={run.error} />;
  const r = run.data;
  const turns = [...new Set(r.tool_calls.map((c) => c.turn))].sort((a, b) => a - b);
  return (
    <article className="run-detail">
      <p>
        <Link to={`/projects/${project}/runs`}>{t('All runs')}</Link>
      </p>
      <header className="run-row-head">
        <Avatar name={name(r.worker_id)} />
        <h2>
          {name(r.worker_id)} · {t('Run #{id}', { id: r.id })}
        </h2>
        <StatusBadge status={r.status} />
        <span className="run-row-actions">
          <RunActions project={project} run={r} onRetried={(next) => navigate(`/projects/${project}/runs/${next}`)} />
        </span>
      </header>
      {r.error_message && (
        <p className="error" role="alert">
          {r.error_message} {r.error && <code>({r.error})</code>}
        </p>
      )}
      <dl className="facts">
        <dt>{t('Model')}</dt>
        <dd>
          {r.model ?? '—'}
          {r.cascade && ` (${t('cascade')})`}
        </dd>
        <dt>{t('Turns')}</dt>
        <dd>{number(r.turns)}</dd>
        <dt>{t('Tokens')}</dt>
        <dd>
          {t('{input} in, {output} out, {total} in all', {
            input: number(r.usage.input_tokens),
            output: number(r.usage.output_tokens),
            total: number(r.usage.total_tokens),
          })}
          {r.usage.cache_tokens > 0 && ` · ${t('{n} from the cache', { n: number(r.usage.cache_tokens) })}`}
        </dd>
        <dt>{t('Duration')}</dt>
        <dd>
          {duration(r.timings.total_ms)}
          {r.timings.queue_ms !== null && ` · ${t('queued {d}', { d: duration(r.timings.queue_ms) })}`}
          {r.timings.gen_ms !== null && ` · ${t('generating {d}', { d: duration(r.timings.gen_ms) })}`}
        </dd>
        <dt>{t('Started')}</dt>
        <dd>{date(r.started_at ?? r.created_at)}</dd>
        {r.finished_at && (
          <>
            <dt>{t('Finished')}</dt>
            <dd>{date(r.finished_at)}</dd>
          </>
        )}
        {r.retry_of && (
          <>
            <dt>{t('Retry of')}</dt>
            <dd>
              <Link to={`/projects/${project}/runs/${r.retry_of}`}>{t('Run #{id}', { id: r.retry_of })}</Link>
            </dd>
          </>
        )}
      </dl>
      {turns.length > 0 && (
        <section>
          <h3>{t('Tool calls')}</h3>
          <ul className="run-turns">
            {turns.map((turn) => (
              <li key={turn}>
                <strong>{t('Turn {n}', { n: turn })}</strong>
                <ul className="tool-cards">
                  {r.tool_calls
                    .filter((c) => c.turn === turn)
                    .map((c, i) => (
                      <ToolCallCard key={i} call={c} />
                    ))}
                </ul>
              </li>
            ))}
          </ul>
        </section>
      )}
      <section>
        <h3>{t('Reply')}</h3>
        {r.reply ? <Markdown text={r.reply} /> : <p className="muted">{t('No reply yet.')}</p>}
      </section>
    </article>
  );
}
