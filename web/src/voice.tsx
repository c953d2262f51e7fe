/**
 * Voice dictation for any text field: record in the browser (MediaRecorder), send the clip to
 * `POST /api/crm/voice/transcribe` (multipart `audio` and `locale`), and put the text into the field: at its
 * caret (a `target` field) or through `onText`. Every multi-line field (`components/TextArea.tsx`) offers it.
 */
import { useEffect, useRef, useState, type RefObject } from 'react';
import { ApiFailure } from './api/client';
import { useI18n } from './i18n';
import { joinDictation } from './lib/dictation';
import { session } from './session';
import { CLIP_TYPES, speechAvailable, transcribe } from './features/voice/api';
import { Mic, Square } from 'lucide-react';
import { icon } from './components/icon';

/**
 * Put dictated `text` into a text field at its caret (replacing a selection), the way typing would: React's
 * `onChange` of a controlled field sees it. The field keeps the focus, the caret after the new text.
 */
export function insertIntoField(el: HTMLTextAreaElement | HTMLInputElement, text: string): void {
  const start = el.selectionStart ?? el.value.length;
  const end = el.selectionEnd ?? start;
  const { value, caret } = joinDictation(el.value.slice(0, start), text, el.value.slice(end));
  // The prototype's setter, so React's value tracker notices the change and the input event reaches onChange.
  const setter = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(el), 'value')?.set;
  if (setter) setter.call(el, value);
  else el.value = value;
  el.dispatchEvent(new Event('input', { bubbles: true }));
  el.focus();
  el.setSelectionRange(caret, caret);
}

/** The recorder's type: the first the browser records of the ones the server accepts. */
function recorderType(): string | undefined {
  return CLIP_TYPES.map(([t]) => t).find((t) => MediaRecorder.isTypeSupported?.(t));
}

/**
 * A "Dictate" button: records until pressed again, then transcribes. The text goes to `target` (inserted at its
 * caret) or to `onText`. `describedBy` names the field (the id of its label). Hidden for guests, where the
 * browser cannot record and where the service has no speech server (`speechAvailable`).
 */
export function VoiceButton({
  onText,
  target,
  describedBy,
}: {
  onText?: (text: string) => void;
  target?: RefObject<HTMLTextAreaElement | HTMLInputElement | null>;
  describedBy?: string;
}) {
  const { t, locale } = useI18n();
  const [state, setState] = useState<'idle' | 'recording' | 'sending'>('idle');
  const [error, setError] = useState('');
  const rec = useRef<MediaRecorder | null>(null);
  const token = session.token();
  const [offered, setOffered] = useState(true);
  useEffect(() => {
    let live = true;
    if (token) void speechAvailable(token).then((yes) => live && setOffered(yes));
    return () => {
      live = false;
    };
  }, [token]);
  // Dictation is for signed-in users (the route needs a token), in browsers that can record, on a service with a
  // speech server.
  if (typeof MediaRecorder === 'undefined' || !navigator.mediaDevices || !token || !offered) return null;
  async function start() {
    setError('');
    try {
      const stream = await navigator.mediaDevices.getUserMedia({ audio: true });
      const chunks: Blob[] = [];
      const type = recorderType();
      const r = new MediaRecorder(stream, type ? { mimeType: type } : undefined);
      r.ondataavailable = (e) => chunks.push(e.data);
      r.onstop = async () => {
        stream.getTracks().forEach((tr) => tr.stop());
        setState('sending');
        try {
          const text = await transcribe(
            new Blob(chunks, { type: r.mimeType || type || 'audio/webm' }),
            locale === 'uk' ? 'uk-UA' : 'en-US',
          );
          if (!text.trim()) setError(t('No speech was recognized.'));
          else if (onText) onText(text.trim());
          else if (target?.current) insertIntoField(target.current, text.trim());
        } catch (err) {
          setError(dictationError(err, t));
        } finally {
          setState('idle');
        }
      };
      rec.current = r;
      r.start();
      setState('recording');
    } catch {
      setError(t('The microphone is not available.'));
    }
  }
  return (
    <span className="voice">
      <button
        type="button"
        className={state === 'recording' ? 'voice-button recording' : 'voice-button'}
        aria-pressed={state === 'recording'}
        aria-describedby={describedBy}
        disabled={state === 'sending'}
        onClick={() => (state === 'recording' ? rec.current?.stop() : void start())}
      >
        {state === 'recording' ? <Square {...icon} /> : <Mic {...icon} />}
        {state === 'recording' ? t('Stop dictation') : state === 'sending' ? t('Transcribing…') : t('Dictate')}
      </button>
      {error && (
        <span role="alert" className="error">
          {error}
        </span>
      )}
    </span>
  );
}

/** The sentence for a failed dictation: a clear one for 503 (no speech server), else the envelope's message. */
export function dictationError(err: unknown, t: (s: string) => string): string {
  if (err instanceof ApiFailure && err.status === 503)
    return t('Dictation is not available: the server has no speech service configured.');
  if (err instanceof ApiFailure && err.message) return err.message;
  return t('Dictation failed.');
}
