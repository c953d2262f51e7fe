import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { useMe } from '../auth';
import {
  progressQuery,
  useDismissChecklist,
  useReplayChecklist,
  useStepEvent,
  videosQuery,
} from '../features/onboarding/api';
import { msg, useI18n } from '../i18n';
import { ErrorLine, Loading, PageTitle } from '../ui';

/** What each checklist step asks of the user, and where it is done. */
const STEPS: Record<string, { title: string; how: string; to: string }> = {
  workers: { title: msg('Set up a team of workers'), how: msg('Create a project from a team preset.'), to: '/setup' },
  cli: { title: msg('Link the command-line client'), how: msg('Run arc login on your machine.'), to: '/help' },
  skill: { title: msg('Add a skill'), how: msg('Give your workers a reusable instruction.'), to: '/projects' },
  bot: { title: msg('Connect a messenger bot'), how: msg('Bind a bot token to a worker.'), to: '/projects' },
  issue: { title: msg('Create an issue'), how: msg('Put a task on the board for a worker.'), to: '/projects' },
};

export default function Onboarding() {
  const { t, date } = useI18n();
  const me = useMe();
  const progress = useQuery(progressQuery());
  const videos = useQuery(videosQuery());
  const event = useStepEvent();
  const dismiss = useDismissChecklist();
  const replay = useReplayChecklist();
  if (progress.isPending) return <Loading />;
  if (progress.isError) return <ErrorLine error={progress.error} />;
  const p = progress.data;
  const steps = p.steps.length ? p.steps : Object.keys(STEPS);
  const total = p.total_steps || steps.length;
  return (
    <section>
      <PageTitle>{t('Getting started')}</PageTitle>
      {me.data && !me.data.email_verified && (
        <p className="notice" role="status">
          {t('Check your inbox: open the link we sent to {email} to verify your address.', { email: me.data.email })}
        </p>
      )}
      {p.dismissed_at ? (
        <div className="card">
          <p>{t('You hid the checklist on {date}.', { date: date(p.dismissed_at) })}</p>
          <button type="button" onClick={() => replay.mutate()}>
            {t('Show the checklist again')}
          </button>
        </div>
      ) : (
        <>
          <p>
            <progress max={total} value={p.completed_count} aria-label={t('Checklist progress')} />{' '}
            {t('{done} of {total} done', { done: p.completed_count, total })}
          </p>
          <ol className="checklist">
            {steps.map((step) => {
              const info = STEPS[step] ?? { title: step, how: '', to: '/projects' };
              const state = p.state[step];
              return (
                <li key={step} className={state ? `step ${state}` : 'step'}>
                  <div>
                    <strong>{t(info.title)}</strong>
                    <p className="muted">{t(info.how)}</p>
                    {state && <span className="badge">{state === 'completed' ? t('Done') : t('Skipped')}</span>}
                  </div>
                  {!state && (
                    <div className="actions">
                      <Link to={info.to}>{t('Start')}</Link>
                      <button type="button" onClick={() => event.mutate({ step, status: 'completed' })}>
                        {t('Mark done')}
                      </button>
                      <button type="button" className="link" onClick={() => event.mutate({ step, status: 'skipped' })}>
                        {t('Skip')}
                      </button>
                    </div>
                  )}
                </li>
              );
            })}
          </ol>
          <button type="button" className="link" onClick={() => dismiss.mutate()}>
            {t('Hide the checklist')}
          </button>
        </>
      )}
      <ErrorLine error={event.error ?? dismiss.error ?? replay.error} />
      <h2>{t('Videos')}</h2>
      <ul className="videos">
        {Object.entries(videos.data?.videos ?? {}).map(([slot, v]) => (
          <li key={slot}>
            {v.url ? (
              <a href={v.url} target="_blank" rel="noreferrer">
                {v.title}
              </a>
            ) : (
              <span>{v.title}</span>
            )}{' '}
            {v.seconds > 0 && <span className="muted">{t('{n} s', { n: v.seconds })}</span>}
          </li>
        ))}
      </ul>
      <p>
        <Link className="button primary" to="/setup">
          {t('Set up a project')}
        </Link>
      </p>
    </section>
  );
}
