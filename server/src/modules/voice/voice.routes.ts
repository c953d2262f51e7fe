/** Voice dictation route (docs/ARCHITECTURE.md, Meeting transcripts and voice dictation). */
import { Type } from 'typebox';
import { requireActor } from '../../http/auth.ts';
import { errors, FilePart } from '../../http/schemas.ts';
import { multipartRoutes } from '../../http/multipart.ts';
import type { TypedApp } from '../../http/typed-app.ts';
import type { VoiceService } from './voice.service.ts';

export function voiceRoutes(app: TypedApp, { voice }: { voice: VoiceService }): void {
  app.get(
    '/api/crm/voice/status',
    {
      schema: {
        tags: ['voice'],
        summary: 'Whether dictation is offered',
        description:
          'False when the service has no speech server (`SPEECH_URL` unset): the clients then offer no dictation, which would fail with 503 `speech_unavailable`.',
        response: { 200: Type.Object({ available: Type.Boolean() }), ...errors(401) },
      },
    },
    async (req) => {
      requireActor(req);
      return voice.status();
    },
  );
  multipartRoutes(app, (scope) =>
    scope.post(
      '/api/crm/voice/transcribe',
      {
        schema: {
          tags: ['voice'],
          summary: 'Transcribe a dictated clip',
          description:
            'Multipart `audio` (webm, ogg or wav, up to 25 MB) and `locale` (BCP-47, passed to the speech server as its language). Each user may dictate 3600 estimated seconds a UTC day (estimated from the clip size: 16,000 bytes a second) with at most 2 clips at once.',
          consumes: ['multipart/form-data'],
          multipart: Type.Object({
            audio: FilePart('the clip: audio/webm, audio/ogg or audio/wav, at most 25 MB'),
            locale: Type.String({ description: 'BCP-47 language tag, e.g. en-US or uk' }),
          }),
          response: {
            200: Type.Object({ transcript: Type.String() }),
            ...errors(400, 401, 413, 429, 500, 502, 503),
          },
        },
      },
      async (req) =>
        voice.transcribe(requireActor(req), () => req.parts({ limits: { fileSize: voice.maxBytes, files: 1 } })),
    ),
  );
}
