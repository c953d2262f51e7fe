import { ApiFailure } from '../api/client';
import { useI18n } from '../i18n';

/** The message of an error for the user: the envelope's sentence, or a generic one. */
export function ErrorLine({ error }: { error: unknown }) {
  const { t } = useI18n();
  if (!error) return null;
  const text =
    error instanceof ApiFailure ? error.message : t('Something went wrong. Check your connection and try again.');
  return (
    <p role="alert" className="error">
      {text}
    </p>
  );
}
