import { useI18n } from '../../i18n';

/** Characters of a source's text shown at once (a long transcript stays responsive); the rest is downloadable. */
const TEXT_PREVIEW = 100_000;

/** A source's extracted text: the first 100,000 characters, and the whole as a .txt download. */
export function SourceText({ title, text }: { title: string; text: string }) {
  const { t, number } = useI18n();
  function download() {
    const url = URL.createObjectURL(new Blob([text], { type: 'text/plain;charset=utf-8' }));
    const base = title.replace(/[^\p{L}\p{N}._-]+/gu, '_').slice(0, 80) || 'source';
    const name = /\.txt$/i.test(base) ? base : `${base}.txt`;
    Object.assign(document.createElement('a'), { href: url, download: name }).click();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  }
  return (
    <>
      {text.length > TEXT_PREVIEW && (
        <p className="muted">
          {t('The first {shown} of {total} characters.', {
            shown: number(TEXT_PREVIEW),
            total: number(text.length),
          })}
        </p>
      )}
      <pre className="source-text" tabIndex={0} aria-label={t('Extracted text')}>
        {text.length > TEXT_PREVIEW ? text.slice(0, TEXT_PREVIEW) : text}
      </pre>
      <button type="button" onClick={download}>
        {t('Download the text')}
      </button>
    </>
  );
}
