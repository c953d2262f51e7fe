import { ApiFailure } from '../api/client';
import { detailField, detailText, errorText } from '../errors';
import { useI18n } from '../i18n';

/**
 * The message of an error for the user, in the UI's language (errors.ts: the envelope's code picks the words);
 * a validation failure lists each field with what is wrong with it. `fields` names the form's fields (the
 * request's field → the label the user sees).
 */
export function ErrorLine({ error, fields }: { error: unknown; fields?: Record<string, string> }) {
  const { t, locale } = useI18n();
  if (!error) return null;
  const details =
    error instanceof ApiFailure && Array.isArray(error.body.details)
      ? (error.body.details as { path?: string; message?: string }[])
      : [];
  return (
    <div role="alert" className="error">
      <p>{errorText(error, t, locale)}</p>
      {details.length > 0 && (
        <ul>
          {details.map((d, i) => {
            const field = detailField(d.path ?? '');
            return (
              <li key={i}>
                <strong>{fields?.[field] ?? field}</strong>: {detailText(d.message ?? '', t)}
              </li>
            );
          })}
        </ul>
      )}
    </div>
  );
}
