import { msg, useI18n } from '../../i18n';
import { isTerminal, stepStates, type ProgressEvent, type StepState } from './transcriptSteps';

const MARKS: Record<StepState, string> = { done: '✓', current: '●', failed: '✕', pending: '○' };
const STATE_LABELS: Record<StepState, string> = {
  done: msg('done'),
  current: msg('in progress'),
  failed: msg('failed'),
  pending: msg('to come'),
};

/** The job's steps as an ordered list: done, current (with its percent), failed (with the reason), to come. */
export function Steps({ kind, embed, event }: { kind: 'audio' | 'video'; embed: boolean; event: ProgressEvent }) {
  const { t, number } = useI18n();
  const steps = stepStates(kind, embed, event);
  return (
    <>
      <ol className="tr-steps" aria-label={t('Steps')}>
        {steps.map((s) => (
          <li key={s.id} className={`tr-step ${s.state}`} aria-current={s.state === 'current' ? 'step' : undefined}>
            <span className="tr-mark" aria-hidden="true">
              {MARKS[s.state]}
            </span>{' '}
            <span>{t(s.label)}</span> <span className="sr-only">({t(STATE_LABELS[s.state])})</span>
            {s.state === 'current' && event.status !== 'queued' && (
              <span className="muted"> · {number(event.progress_pct)} %</span>
            )}
            {s.state === 'failed' && event.error && (
              <p role="alert" className="error">
                {event.error}
              </p>
            )}
          </li>
        ))}
      </ol>
      {!isTerminal(event.status) && (
        <progress className="tr-progress" max={100} value={event.progress_pct} aria-label={t('Progress')} />
      )}
    </>
  );
}
