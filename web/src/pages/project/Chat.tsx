import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback, useEffect, useMemo, useReducer, useRef, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { ApiFailure } from '../../api/client';
import { ApprovalCard } from '../../features/approvals/ApprovalCard';
import { approvalsQuery } from '../../features/approvals/api';
import { chatHistoryQuery, chatKeys, useSendToWorkers } from '../../features/chat/api';
import {
  followRun,
  isActive,
  RUN_STATUS_LABELS,
  runKeys,
  runsQuery,
  useCancelRun,
  type RunStatus,
} from '../../features/runs/api';
import { runtimeQuery, workerKeys, workersQuery } from '../../features/workers/api';
import { useI18n } from '../../i18n';
import { Avatar, ErrorLine, Loading, Markdown } from '../../ui';
import { VoiceButton } from '../../voice';
import { buildThread, liveReducer, type ThreadItem, type ToolCard } from './chatState';
import type { TabProps } from '../../features/projects/types';
import { Check, Copy, RefreshCw, Send, Square } from 'lucide-react';
import { icon } from '../../components/icon';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Chat with the project's workers: one message goes to the chosen workers (one run each) and the page follows
 * each run's events, so every worker's reply streams into one thread under the message. The runs go on on the
 * server: after a reload or a lost connection the page re-attaches to the runs still going (a snapshot of what
 * was written, then the live events). A run waiting for an approval shows the approval card inline.
 */
export default function Chat({ project }: TabProps) {
  const { t, number } = useI18n();
  const qc = useQueryClient();
  const workers = useQuery(workersQuery(project));
  const list = useMemo(() => workers.data?.workers ?? [], [workers.data]);
  // The chosen workers are in the address (`?to=1,2`), so a reload keeps the thread.
  const [params, setParams] = useSearchParams();
  // A choice shows at once; the address follows (a navigation React may finish a moment later), and a change of
  // the address (Back, Forward, a link) is taken as it comes.
  const [picked, setPicked] = useState<{ ids: number[]; from: string } | null>(null);
  const fromAddress = params.get('to') ?? '';
  const selected = useMemo(
    () =>
      (picked && picked.from === fromAddress ? picked.ids : fromAddress.split(',').map(Number)).filter((id) =>
        list.some((w) => w.id === id),
      ),
    [picked, fromAddress, list],
  );
  const setSelected = (ids: number[]) => {
    setPicked({ ids, from: fromAddress });
    setParams(
      (cur) => {
        const next = new URLSearchParams(cur);
        next.set('to', ids.join(','));
        return next;
      },
      { replace: true },
    );
  };
  const [text, setText] = useState('');
  const [live, dispatch] = useReducer(liveReducer, {});
  const first = list[0]?.id ?? 0;
  const chosen = useMemo(() => (selected.length ? selected : first ? [first] : []), [selected, first]);
  const workerId = chosen.length === 1 ? chosen[0] : null;
  const history = useQuery({ ...chatHistoryQuery(project, workerId), enabled: chosen.length > 0 });
  const runs = useQuery(runsQuery(project));
  const runtime = useQuery({ ...runtimeQuery(project, chosen[0] ?? 0), enabled: chosen.length > 0 });
  const cancel = useCancelRun(project);
  const names = useMemo(() => new Map(list.map((w) => [w.id, w.label])), [list]);
  const inView = useCallback((id: number) => chosen.includes(id), [chosen]);

  // Followed runs (by id), and runs seen ending here with their last status: a run that ended is not re-attached
  // from a list that has not caught up yet, but one that waited for an approval is when the list shows it going on
  // again (decided elsewhere).
  const followers = useRef(new Map<number, AbortController>());
  const ended = useRef(new Map<number, string>());
  const refresh = useCallback(() => {
    void qc.invalidateQueries({ queryKey: chatKeys.all(project) });
    void qc.invalidateQueries({ queryKey: runKeys.all(project) });
    void qc.invalidateQueries({ queryKey: workerKeys.all(project) });
  }, [qc, project]);
  const follow = useCallback(
    (runId: number) => {
      if (followers.current.has(runId)) return;
      const ctrl = new AbortController();
      followers.current.set(runId, ctrl);
      ended.current.delete(runId);
      dispatch({ type: 'start', runId });
      void (async () => {
        let wait = 1000;
        let last = 'failed';
        for (;;) {
          let done = false;
          try {
            await followRun(
              project,
              runId,
              (e) => {
                dispatch({ type: 'event', runId, event: e.event, data: e.data });
                if (e.event === 'done') {
                  done = true;
                  last = String((e.data as { status?: string } | null)?.status ?? last);
                }
              },
              ctrl.signal,
            );
          } catch (err) {
            if (ctrl.signal.aborted) return;
            if (err instanceof ApiFailure && err.status < 500) {
              dispatch({ type: 'failed', runId, message: err.message });
              done = true;
            }
          }
          if (ctrl.signal.aborted) return;
          if (done) break;
          // The connection was lost (or closed before the end): the run goes on on the server; attach again.
          dispatch({ type: 'lost', runId });
          await sleep(wait);
          wait = Math.min(wait * 2, 10_000);
          if (ctrl.signal.aborted) return;
        }
        followers.current.delete(runId);
        ended.current.set(runId, last);
        refresh();
      })();
    },
    [project, refresh],
  );
  useEffect(() => {
    const map = followers.current;
    return () => {
      for (const c of map.values()) c.abort();
      map.clear();
    };
  }, [project]);
  // Re-attach to the runs of this view that are still going (after a reload, or sent from another tab).
  useEffect(() => {
    for (const r of runs.data?.runs ?? [])
      if (
        isActive(r.status) &&
        inView(r.worker_id) &&
        [undefined, 'waiting_approval'].includes(ended.current.get(r.id))
      )
        follow(r.id);
  }, [runs.data, inView, follow]);

  const send = useSendToWorkers(project, {
    onSuccess: (data) => {
      setText('');
      for (const id of data.run_ids) follow(id);
    },
  });
  const thread = useMemo(
    () => buildThread(history.data?.messages ?? [], runs.data?.runs ?? [], live, inView),
    [history.data, runs.data, live, inView],
  );
  const waiting = thread.some((i) => i.kind === 'reply' && i.status === 'waiting_approval');
  const approvals = useQuery({ ...approvalsQuery(project, 'pending'), enabled: waiting });
  const streaming = thread.filter((i) => i.kind === 'reply' && i.streaming && i.runId) as Extract<
    ThreadItem,
    { kind: 'reply' }
  >[];
  const lastUsage = useMemo(() => {
    const ids = Object.keys(live)
      .map(Number)
      .sort((a, b) => b - a);
    return ids.map((id) => live[id].usage).find(Boolean);
  }, [live]);

  function submit(message = text, to = chosen) {
    const body = message.trim();
    if (!body || !to.length || send.isPending) return;
    send.mutate({ worker_ids: to, text: body });
  }

  if (workers.isPending) return <Loading />;
  if (!list.length) return <p>{t('Add a worker first.')}</p>;
  return (
    <div className="chat">
      <fieldset className="chips">
        <legend>{t('Talk to')}</legend>
        {list.map((w) => (
          <label key={w.id}>
            <input
              type="checkbox"
              checked={chosen.includes(w.id)}
              onChange={(e) => {
                const next = e.target.checked ? [...new Set([...chosen, w.id])] : chosen.filter((x) => x !== w.id);
                if (next.length) setSelected(next);
              }}
            />
            <Avatar name={w.label} size={20} />
            {w.label}
          </label>
        ))}
      </fieldset>
      {runtime.data && (
        <p className="muted">
          {t('Tokens today: {used}', { used: number(runtime.data.tokens_today) })}
          {runtime.data.tokens_cap ? ` / ${number(runtime.data.tokens_cap)}` : ''}{' '}
          <meter min={0} max={100} value={runtime.data.tokens_pct} aria-label={t('Share of the daily cap used')} />
          {lastUsage && (
            <>
              {' · '}
              {t('last reply: {n} tokens', {
                n: number((lastUsage.input_tokens ?? 0) + (lastUsage.output_tokens ?? 0)),
              })}
            </>
          )}
        </p>
      )}
      {history.isPending && chosen.length > 0 && <Loading />}
      <ErrorLine error={history.error} />
      <ol className="transcript" aria-live="polite">
        {thread.map((item) =>
          item.kind === 'user' ? (
            <li key={item.key} className="msg user">
              <span className="who">{t('You')}</span>
              <div className="text">{item.text}</div>
            </li>
          ) : (
            <Reply
              key={item.key}
              project={project}
              item={item}
              name={
                item.workerId ? (names.get(item.workerId) ?? t('Worker #{id}', { id: item.workerId })) : t('Worker')
              }
              approvals={(approvals.data?.approvals ?? []).filter((a) => a.run_id === item.runId)}
              onRegenerate={item.prompt && item.workerId ? () => submit(item.prompt!, [item.workerId!]) : undefined}
              onResume={(runId) => follow(runId)}
              onCancel={(runId) => cancel.mutate(runId)}
              busy={send.isPending}
            />
          ),
        )}
        {send.isPending && send.variables && (
          <li className="msg user pending">
            <span className="who">{t('You')}</span>
            <div className="text">{send.variables.text}</div>
          </li>
        )}
      </ol>
      <ErrorLine error={send.error ?? cancel.error} />
      <form
        className="composer"
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        <label htmlFor="chat-text" className="sr-only">
          {t('Message')}
        </label>
        <textarea
          id="chat-text"
          rows={3}
          value={text}
          maxLength={32000}
          placeholder={chosen.length > 1 ? t('Write to {n} workers…', { n: chosen.length }) : t('Write a message…')}
          onChange={(e) => setText(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && !e.shiftKey) {
              e.preventDefault();
              submit();
            }
          }}
        />
        <VoiceButton onText={(v) => setText((cur) => (cur ? `${cur} ${v}` : v))} />
        {streaming.length > 0 && (
          <button type="button" onClick={() => streaming.forEach((r) => cancel.mutate(r.runId!))}>
            <Square {...icon} />
            {t('Stop')}
          </button>
        )}
        <button type="submit" className="primary" disabled={!text.trim() || send.isPending}>
          <Send {...icon} />
          {t('Send')}
        </button>
      </form>
    </div>
  );
}

/** One worker's reply: avatar and name, the Markdown text (streaming), tool cards, approvals, copy and regenerate. */
function Reply({
  project,
  item,
  name,
  approvals,
  onRegenerate,
  onResume,
  onCancel,
  busy,
}: {
  project: string;
  item: Extract<ThreadItem, { kind: 'reply' }>;
  name: string;
  approvals: Parameters<typeof ApprovalCard>[0]['approval'][];
  onRegenerate?: () => void;
  onResume: (runId: number) => void;
  onCancel: (runId: number) => void;
  busy: boolean;
}) {
  const { t } = useI18n();
  const [copied, setCopied] = useState(false);
  const status = item.status as RunStatus | null;
  const ongoing = item.streaming || isActive(status ?? undefined);
  return (
    <li className={`msg assistant${ongoing ? ' streaming' : ''}`} data-run={item.runId ?? undefined}>
      <div className="reply-head">
        <Avatar name={name} />
        <span className="who">{name}</span>
        {status && status !== 'succeeded' && (
          <span className={`status ${status}`}>{t(RUN_STATUS_LABELS[status] ?? status)}</span>
        )}
        {item.reconnecting && <span className="muted">{t('Reconnecting…')}</span>}
      </div>
      {item.tools.length > 0 && (
        <ul className="tool-cards">
          {item.tools.map((c, i) => (
            <ToolCardView key={i} project={project} card={c} />
          ))}
        </ul>
      )}
      {item.text ? (
        <Markdown text={item.text} className="text" />
      ) : (
        ongoing && (
          <div className="text typing" aria-label={t('Writing…')}>
            …
          </div>
        )
      )}
      {item.error && status !== 'succeeded' && <p className="error">{item.error}</p>}
      {status === 'waiting_approval' &&
        approvals.map((a) => (
          <ApprovalCard
            key={a.id}
            project={project}
            approval={a}
            workerName={name}
            onDecided={() => item.runId && onResume(item.runId)}
          />
        ))}
      {!ongoing && (
        <div className="reply-actions">
          {item.text && (
            <button
              type="button"
              className="small"
              onClick={() =>
                void navigator.clipboard?.writeText(item.text).then(() => {
                  setCopied(true);
                  setTimeout(() => setCopied(false), 1500);
                })
              }
            >
              {copied ? <Check {...icon} /> : <Copy {...icon} />}
              {copied ? t('Copied') : t('Copy')}
            </button>
          )}
          {onRegenerate && status !== 'waiting_approval' && (
            <button type="button" className="small" disabled={busy} onClick={onRegenerate}>
              <RefreshCw {...icon} />
              {t('Regenerate')}
            </button>
          )}
          {status === 'waiting_approval' && item.runId && (
            <button type="button" className="small" onClick={() => onCancel(item.runId!)}>
              {t('Cancel')}
            </button>
          )}
          {item.runId && (
            <Link className="small" to={`/projects/${project}/runs/${item.runId}`}>
              {t('Run details')}
            </Link>
          )}
        </div>
      )}
    </li>
  );
}

/** A tool call as a card: a created issue links to the board. */
function ToolCardView({ project, card }: { project: string; card: ToolCard }) {
  const { t } = useI18n();
  if (card.tool === 'create_issue' && card.issue_id && !card.is_error)
    return (
      <li className="tool-card issue">
        <span className="tool-name">{t('Issue created')}</span>{' '}
        <Link to={`/projects/${project}/issues`}>
          #{card.issue_id} {card.title}
        </Link>
        {card.priority && <span className="badge">{card.priority}</span>}
      </li>
    );
  return (
    <li className={`tool-card${card.is_error ? ' failed' : ''}`}>
      <span className="tool-name">
        {t('Tool')}: <code>{card.tool}</code>
      </span>
      {card.summary && <span className="muted"> {card.summary}</span>}
      {card.is_error && <span className="error"> ({t('failed')})</span>}
    </li>
  );
}
