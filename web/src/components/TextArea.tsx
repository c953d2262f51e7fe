import { useId, useRef, type TextareaHTMLAttributes } from 'react';
import { VoiceButton } from '../voice';

/** A labelled multi-line field that offers voice dictation (inserted at the caret). */
export function TextArea({ label, ...props }: TextareaHTMLAttributes<HTMLTextAreaElement> & { label: string }) {
  const id = useId();
  const ref = useRef<HTMLTextAreaElement>(null);
  return (
    <div className="field">
      <div className="field-head">
        <label htmlFor={id} id={`${id}-label`}>
          {label}
        </label>
        <VoiceButton target={ref} describedBy={`${id}-label`} />
      </div>
      <textarea id={id} ref={ref} {...props} />
    </div>
  );
}
