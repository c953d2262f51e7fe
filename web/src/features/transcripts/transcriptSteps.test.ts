import { describe, expect, it } from 'vitest';
import {
  clock,
  failedStep,
  stepsFor,
  stepStates,
  summaryFailed,
  uploadMime,
  type ProgressEvent,
} from './transcriptSteps';

const ev = (status: string, progress_pct: number, error: string | null = null): ProgressEvent => ({
  status,
  progress_pct,
  error,
});
const states = (kind: 'audio' | 'video', embed: boolean, e: ProgressEvent) =>
  stepStates(kind, embed, e).map((s) => `${s.id}:${s.state}`);

describe('transcript steps', () => {
  it('audio has no frame steps; video has them after the transcript; embedding only when asked', () => {
    expect(stepsFor('audio', true)).toEqual([
      'queued',
      'extracting_audio',
      'transcribing',
      'summarizing',
      'embedding',
      'done',
    ]);
    expect(stepsFor('video', true)).toEqual([
      'queued',
      'extracting_audio',
      'transcribing',
      'extracting_frames',
      'vision_analyzing',
      'summarizing',
      'embedding',
      'done',
    ]);
    expect(stepsFor('audio', false)).not.toContain('embedding');
  });

  it('a running status is the current step, earlier ones done, later ones pending', () => {
    expect(states('audio', true, ev('queued', 0))).toEqual([
      'queued:current',
      'extracting_audio:pending',
      'transcribing:pending',
      'summarizing:pending',
      'embedding:pending',
      'done:pending',
    ]);
    expect(states('audio', true, ev('transcribing', 20))).toEqual([
      'queued:done',
      'extracting_audio:done',
      'transcribing:current',
      'summarizing:pending',
      'embedding:pending',
      'done:pending',
    ]);
  });

  it('a finished step (video "transcribing" at 50 %, or a resting status) moves on to the next one', () => {
    expect(states('video', true, ev('transcribing', 50))).toContain('transcribing:done');
    expect(states('video', true, ev('transcribing', 50))).toContain('extracting_frames:current');
    expect(states('video', true, ev('vision_analyzed', 75))).toContain('summarizing:current');
    expect(states('audio', true, ev('extracting_audio', 15))).toContain('transcribing:current');
  });

  it('done marks every step done', () => {
    expect(stepStates('video', false, ev('done', 100)).every((s) => s.state === 'done')).toBe(true);
  });

  it('failed marks the step it stopped in (from the percent kept), earlier ones done', () => {
    expect(failedStep(stepsFor('audio', true), 20)).toBe('transcribing');
    expect(failedStep(stepsFor('audio', true), 0)).toBe('extracting_audio');
    expect(failedStep(stepsFor('video', true), 50)).toBe('extracting_frames');
    expect(failedStep(stepsFor('audio', true), 92)).toBe('embedding');
    expect(states('audio', true, ev('failed', 20, 'No speech server is configured (SPEECH_URL).'))).toEqual([
      'queued:done',
      'extracting_audio:done',
      'transcribing:failed',
      'summarizing:pending',
      'embedding:pending',
      'done:pending',
    ]);
  });

  it('a failed summary rests in transcribed / frames_extracted with an error: the summary step failed', () => {
    expect(summaryFailed(ev('transcribed', 50, 'The summary failed'))).toBe(true);
    expect(summaryFailed(ev('transcribed', 50))).toBe(false);
    expect(states('audio', true, ev('transcribed', 50, 'The summary failed'))).toContain('summarizing:failed');
    expect(states('video', true, ev('frames_extracted', 75, 'The summary failed'))).toEqual([
      'queued:done',
      'extracting_audio:done',
      'transcribing:done',
      'extracting_frames:done',
      'vision_analyzing:done',
      'summarizing:failed',
      'embedding:pending',
      'done:pending',
    ]);
    // Frames extracted without an error: describing them comes next.
    expect(states('video', true, ev('frames_extracted', 58))).toContain('vision_analyzing:current');
  });

  it('an unknown status leaves every step pending', () => {
    expect(stepStates('audio', true, ev('mystery', 0)).every((s) => s.state === 'pending')).toBe(true);
  });
});

describe('transcript uploads', () => {
  it("sends the browser's type when accepted for the extension, else the extension's usual one", () => {
    expect(uploadMime('standup.wav', 'audio/wav')).toBe('audio/wav');
    expect(uploadMime('standup.WAV', 'audio/x-wav')).toBe('audio/x-wav');
    expect(uploadMime('call.mkv', '')).toBe('video/x-matroska');
    expect(uploadMime('call.opus', 'audio/ogg; codecs=opus')).toBe('audio/ogg');
    expect(uploadMime('call.mp4', 'audio/wav')).toBe('video/mp4');
    expect(uploadMime('notes.txt', 'text/plain')).toBeNull();
    expect(uploadMime('noextension', '')).toBeNull();
  });
  it('formats frame times', () => {
    expect(clock(0)).toBe('00:00');
    expect(clock(65_400)).toBe('01:05');
    expect(clock(3_725_000)).toBe('1:02:05');
  });
});
