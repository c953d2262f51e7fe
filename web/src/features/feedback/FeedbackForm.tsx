import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { sendFeedback } from './api';
import { useI18n } from '../../i18n';
import { ErrorLine, Field, Select, TextArea } from '../../ui';
import { projectOfPath } from './logic';

type FeedbackType = 'bug' | 'feature' | 'other';
/** The feedback form (kind, title, description); the project of the current page is sent along. */
export function FeedbackForm({ onDone }: { onDone: () => void }) {
  const { t } = useI18n();
  const [form, setForm] = useState<{ type: FeedbackType; title: string; description: string }>({
    type: 'bug',
    title: '',
    description: '',
  });
  const send = useMutation({
    mutationFn: () => {
      const project = projectOfPath(location.pathname);
      return sendFeedback({ ...form, ...(project ? { project } : {}), browser: navigator.userAgent.slice(0, 300) });
    },
    onSuccess: onDone,
  });
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        send.mutate();
      }}
    >
      <Select
        label={t('Kind')}
        value={form.type}
        onChange={(type) => setForm({ ...form, type: type as FeedbackType })}
        options={[
          { value: 'bug', label: t('Something is broken') },
          { value: 'feature', label: t('An idea') },
          { value: 'other', label: t('Something else') },
        ]}
      />
      <Field
        label={t('Title')}
        required
        maxLength={200}
        value={form.title}
        onChange={(e) => setForm({ ...form, title: e.target.value })}
      />
      <TextArea
        label={t('Description')}
        required
        maxLength={5000}
        rows={5}
        value={form.description}
        onChange={(e) => setForm({ ...form, description: e.target.value })}
      />
      <ErrorLine error={send.error} />
      <button type="submit" className="primary" disabled={send.isPending}>
        {t('Send')}
      </button>
    </form>
  );
}
