import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { register as signUp } from '../../features/auth/api';
import { useI18n } from '../../i18n';
import { session } from '../../session';
import { ErrorLine, Field, PageTitle } from '../../ui';
import { IdpButton } from './IdpButton';

export default function Register() {
  const { t } = useI18n();
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const [form, setForm] = useState({ name: '', email: '', password: '', invite_code: params.get('code') ?? '' });
  const set = (k: keyof typeof form) => (e: React.ChangeEvent<HTMLInputElement>) =>
    setForm({ ...form, [k]: e.target.value });
  const register = useMutation({
    mutationFn: () => signUp(form),
    onSuccess: (r) => {
      session.signIn(r.token);
      navigate('/onboarding?welcome=1', { replace: true });
    },
  });
  return (
    <section className="narrow">
      <PageTitle>{t('Register')}</PageTitle>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          register.mutate();
        }}
      >
        <Field label={t('Name')} autoComplete="name" value={form.name} onChange={set('name')} />
        <Field
          label={t('E-mail')}
          type="email"
          autoComplete="email"
          required
          value={form.email}
          onChange={set('email')}
        />
        <Field
          label={t('Password')}
          type="password"
          autoComplete="new-password"
          required
          minLength={8}
          hint={t('At least 8 characters; a passphrase is best.')}
          value={form.password}
          onChange={set('password')}
        />
        <Field label={t('Invite code')} required value={form.invite_code} onChange={set('invite_code')} />
        <ErrorLine error={register.error} />
        <button type="submit" className="primary" disabled={register.isPending}>
          {t('Create account')}
        </button>
      </form>
      <IdpButton register inviteCode={form.invite_code} redirect="/onboarding?welcome=1" />
      <p>
        {t('No invite code?')} <Link to="/waitlist">{t('Join the beta waitlist')}</Link>
      </p>
    </section>
  );
}
