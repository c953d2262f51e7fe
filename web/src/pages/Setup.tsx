import { useMutation, useQuery } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { ApiFailure } from '../api/client';
import { billingStatusQuery } from '../features/billing/api';
import { suggestPresetQuery } from '../features/projects/api';
import { recordWizard, setupProject } from '../features/onboarding/api';
import { presetsQuery } from '../features/workers/api';
import { useI18n } from '../i18n';
import { ErrorLine, Field, PageTitle } from '../ui';
import { PROJECT_NAME_MAX, PROJECT_NAME_PATTERN, useSlugify } from './projectName';

/**
 * The setup wizard: a project from a team preset, with the user's own LLM key or the trial. The step is in the
 * address (`?step=2`), so Back and Forward walk the steps; a plan already at its project limit is said before the
 * first step, with the way to a bigger plan.
 */
export default function Setup() {
  const { t, tn, locale } = useI18n();
  const navigate = useNavigate();
  const [params, setParams] = useSearchParams();
  const [displayName, setDisplayName] = useState('');
  // A reload loses what was typed: the wizard starts again at its first step.
  const step = displayName ? Math.min(3, Math.max(1, Number(params.get('step')) || 1)) : 1;
  const setStep = (n: number) =>
    setParams((p) => {
      const next = new URLSearchParams(p);
      next.set('step', String(n));
      return next;
    });
  const billing = useQuery(billingStatusQuery());
  const [projectName, setProjectName] = useState('');
  const [niche, setNiche] = useState('');
  const [teamPreset, setTeamPreset] = useState('');
  const [keyMode, setKeyMode] = useState<'trial' | 'own'>('trial');
  const [llmKey, setLlmKey] = useState('');
  const suggestion = useQuery({ ...suggestPresetQuery(niche), enabled: step === 2 && niche.length > 1 });
  const presets = useQuery(presetsQuery());
  const slugify = useSlugify();
  const name = projectName || (slugify ? slugify(displayName) : '');
  // The wizard's metrics for the admin's analytics: a start when it opens (not when the plan is already full), a
  // completion with its duration, an abandon when it is left before.
  const run = useRef<{ started: number; attempts: number; done: boolean } | null>(null);
  const limit = billing.data?.limits.projects;
  const full =
    !!billing.data && limit != null && !billing.data.features.plan_limit_bypass && billing.data.usage.projects >= limit;
  const billingLoaded = billing.isSuccess;
  useEffect(() => {
    if (!billingLoaded || full || run.current) return;
    run.current = { started: Date.now(), attempts: 0, done: false };
    recordWizard({ action: 'start', locale });
  }, [billingLoaded, full, locale]);
  useEffect(
    () => () => {
      const r = run.current;
      if (r && !r.done) recordWizard({ action: 'abandon', duration_ms: Date.now() - r.started, attempts: r.attempts });
    },
    [],
  );
  const setup = useMutation({
    mutationFn: () =>
      setupProject({
        displayName,
        projectName: name,
        ...(niche ? { niche } : {}),
        teamPreset: teamPreset || suggestion.data?.preset_id || undefined,
        ...(keyMode === 'own' && llmKey ? { llmKey } : {}),
      }),
    onMutate: () => {
      if (run.current) run.current.attempts++;
    },
    onSuccess: (r) => {
      if (run.current) {
        run.current.done = true;
        recordWizard({
          action: 'complete',
          duration_ms: Date.now() - run.current.started,
          attempts: run.current.attempts,
          success: true,
          project: r.project.name,
        });
      }
      navigate(`/projects/${r.project.name}/workers`);
    },
    // A name the service refuses is fixed on the first step, where the names are.
    onError: (err) => {
      if (err instanceof ApiFailure && ['invalid_project_name', 'project_exists'].includes(err.body.error)) setStep(1);
    },
  });
  const teams = [
    ['software', t('Software product')],
    ['ecommerce', t('Online shop')],
    ['content', t('Content and media')],
    ['marketing', t('Marketing')],
    ['research', t('Research')],
    ['support', t('Customer support')],
    ['startup', t('Startup (generalist)')],
  ];
  if (full)
    return (
      <section className="narrow">
        <PageTitle>{t('Set up a project')}</PageTitle>
        <p role="alert">
          {tn(
            'Your plan ({plan}) allows {n} project, and you have {count}.',
            'Your plan ({plan}) allows {n} projects, and you have {count}.',
            limit,
            { plan: billing.data.plan, count: billing.data.usage.projects },
          )}
        </p>
        <p>
          <Link className="button primary" to="/account?tab=billing">
            {t('See the plans')}
          </Link>{' '}
          <Link to="/projects">{t('Back to the projects')}</Link>
        </p>
      </section>
    );
  return (
    <section className="narrow">
      <PageTitle>{t('Set up a project')}</PageTitle>
      <p className="muted">{t('Step {n} of 3', { n: step })}</p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (step < 3) setStep(step + 1);
          else setup.mutate();
        }}
      >
        {step === 1 && (
          <>
            <Field
              label={t('Project name')}
              required
              value={displayName}
              onChange={(e) => setDisplayName(e.target.value)}
            />
            <Field
              label={t('Technical name')}
              hint={t('Lower-case letters, digits and dashes; it names the project in links.')}
              pattern={PROJECT_NAME_PATTERN}
              maxLength={PROJECT_NAME_MAX}
              value={name}
              onChange={(e) => setProjectName(e.target.value)}
            />
            <Field label={t('What is it about? (niche)')} value={niche} onChange={(e) => setNiche(e.target.value)} />
          </>
        )}
        {step === 2 && (
          <fieldset>
            <legend>{t('Team preset')}</legend>
            {suggestion.data?.preset_id && (
              <p className="muted">{t('Suggested for your niche: {preset}', { preset: suggestion.data.preset_id })}</p>
            )}
            {teams.map(([id, label]) => (
              <label key={id} className="radio">
                <input
                  type="radio"
                  name="team"
                  value={id}
                  checked={(teamPreset || suggestion.data?.preset_id) === id}
                  onChange={() => setTeamPreset(id)}
                />
                {label}
              </label>
            ))}
            <p className="muted">
              {tn(
                '{n} worker preset is available to add later.',
                '{n} worker presets are available to add later.',
                presets.data?.presets.length ?? 0,
              )}
            </p>
          </fieldset>
        )}
        {step === 3 && (
          <fieldset>
            <legend>{t('LLM key')}</legend>
            <label className="radio">
              <input type="radio" name="key" checked={keyMode === 'trial'} onChange={() => setKeyMode('trial')} />
              {t('Start with the free trial (a verified e-mail is needed)')}
            </label>
            <label className="radio">
              <input type="radio" name="key" checked={keyMode === 'own'} onChange={() => setKeyMode('own')} />
              {t('Use my own LLM key')}
            </label>
            {keyMode === 'own' && (
              <Field
                label={t('LLM key')}
                type="password"
                autoComplete="off"
                value={llmKey}
                onChange={(e) => setLlmKey(e.target.value)}
              />
            )}
          </fieldset>
        )}
        <ErrorLine
          error={setup.error}
          fields={{
            displayName: t('Project name'),
            projectName: t('Technical name'),
            niche: t('What is it about? (niche)'),
          }}
        />
        <div className="actions">
          {step > 1 && (
            <button type="button" onClick={() => setStep(step - 1)}>
              {t('Back')}
            </button>
          )}
          <button type="submit" className="primary" disabled={setup.isPending}>
            {step < 3 ? t('Next') : t('Create the project')}
          </button>
        </div>
      </form>
    </section>
  );
}
