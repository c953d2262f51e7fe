/**
 * Voice dictation through the HTTP API with a local speech stand-in: the transcript, the locale passed as the
 * language, the field and size refusals, the daily quota kept in the database, two dictations at once, a
 * failing speech server (502) and none configured (503).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, buildTestApp, createUser, multipartBody, type TestApp } from '../../../test/helpers.ts';
import { startSpeechStandIn } from '../../../test/standins/speech.ts';
import { VOICE_BYTES_PER_SECOND, VOICE_DAILY_SECONDS } from './voice.service.ts';

describe('voice dictation', () => {
  let t: TestApp;
  let speech: Awaited<ReturnType<typeof startSpeechStandIn>>;
  const clip = Buffer.concat([Buffer.from('OggS'), Buffer.alloc(32_000, 3)]);
  const send = (token: string | undefined, parts: Parameters<typeof multipartBody>[0], app = t.app) => {
    const m = multipartBody(parts);
    return api(app, 'POST', '/api/crm/voice/transcribe', { token, payload: m.payload, headers: m.headers });
  };
  const ok = (extra: Parameters<typeof multipartBody>[0] = []) => [
    { name: 'locale', value: 'uk-UA' },
    { name: 'audio', value: clip, filename: 'clip.ogg', contentType: 'audio/ogg; codecs=opus' },
    ...extra,
  ];

  beforeAll(async () => {
    speech = await startSpeechStandIn({ respond: () => ({ text: 'привіт світ' }) });
    t = await buildTestApp({ env: { SPEECH_URL: speech.url } });
  });
  afterAll(async () => {
    await t?.close();
    await speech?.close();
  });

  it('answers the transcript, passing the locale as the language; nothing is kept on disk', async () => {
    const u = await createUser(t);
    const r = await send(u.token, ok());
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual({ transcript: 'привіт світ' });
    const req = speech.requests.at(-1)!;
    expect(req).toMatchObject({ language: 'uk', bytes: clip.length });
    expect(req.head.subarray(0, 4).toString('latin1')).toBe('OggS');
    const tmp = path.join(t.dataDir, 'tmp');
    expect(fs.existsSync(tmp) ? fs.readdirSync(tmp).filter((f) => f.startsWith('voice-')) : []).toEqual([]);
    const used = await t.db.selectFrom('voice_usage').selectAll().where('user_id', '=', u.id).execute();
    expect(used[0].seconds).toBe(Math.ceil(clip.length / VOICE_BYTES_PER_SECOND));
  });

  it('refuses missing fields, other types, a bad locale, and clips over 25 MB', async () => {
    const u = await createUser(t);
    expect((await send(undefined, ok())).status).toBe(401);
    const noAudio = await send(u.token, [{ name: 'locale', value: 'en' }]);
    expect([noAudio.status, noAudio.body.error]).toEqual([400, 'audio_required']);
    const noLocale = await send(u.token, [{ name: 'audio', value: clip, filename: 'a.ogg', contentType: 'audio/ogg' }]);
    expect([noLocale.status, noLocale.body.error]).toEqual([400, 'locale_required']);
    const badLocale = await send(u.token, [
      { name: 'locale', value: 'not a locale!' },
      { name: 'audio', value: clip, filename: 'a.ogg', contentType: 'audio/ogg' },
    ]);
    expect([badLocale.status, badLocale.body.error]).toEqual([400, 'invalid_locale']);
    const mp3 = await send(u.token, [
      { name: 'locale', value: 'en' },
      { name: 'audio', value: clip, filename: 'a.mp3', contentType: 'audio/mpeg' },
    ]);
    expect([mp3.status, mp3.body.error]).toEqual([400, 'invalid_mime']);
    // A playlist declared as WAV is refused by its bytes and never reaches the speech server.
    const sent = speech.requests.length;
    const playlist = await send(u.token, [
      { name: 'locale', value: 'en' },
      {
        name: 'audio',
        value: Buffer.from('#EXTM3U\n#EXTINF:1,\n/etc/some/file.wav\n#EXT-X-ENDLIST\n'),
        filename: 'a.wav',
        contentType: 'audio/wav',
      },
    ]);
    expect([playlist.status, playlist.body.error]).toEqual([400, 'invalid_mime']);
    expect(speech.requests.length).toBe(sent);
    const big = await send(u.token, [
      { name: 'locale', value: 'en' },
      { name: 'audio', value: Buffer.alloc(25 * 1024 * 1024 + 10, 1), filename: 'a.wav', contentType: 'audio/wav' },
    ]);
    expect([big.status, big.body.error]).toEqual([413, 'payload_too_large']);
    expect(await t.db.selectFrom('voice_usage').selectAll().where('user_id', '=', u.id).execute()).toEqual([]);
  }, 60_000);

  it('stops at 3600 estimated seconds a day (kept in the database) and at 2 dictations at once', async () => {
    const u = await createUser(t);
    const day = new Date().toISOString().slice(0, 10);
    await t.db
      .insertInto('voice_usage')
      .values({ user_id: u.id, day, seconds: VOICE_DAILY_SECONDS - 1 })
      .execute();
    const over = await send(u.token, ok());
    expect([over.status, over.body.error]).toEqual([429, 'voice_quota_exceeded']);
    expect(over.body).toMatchObject({ limit_seconds: 3600, used_seconds: 3599 });

    const v = await createUser(t);
    speech.respond(() => ({ text: 'slow', delayMs: 3000 }));
    try {
      // The third is sent once both others are at the speech server (in flight), however slow the machine.
      const at = speech.requests.length;
      const third = async () => {
        while (speech.requests.length < at + 2) await new Promise((r) => setTimeout(r, 20));
        return send(v.token, ok());
      };
      const [a, b, c] = await Promise.all([send(v.token, ok()), send(v.token, ok()), third()]);
      expect([a.status, b.status]).toEqual([200, 200]);
      expect([c.status, c.body.error]).toEqual([429, 'voice_busy']);
    } finally {
      speech.respond(() => ({ text: 'привіт світ' }));
    }
    expect(await t.db.selectFrom('voice_jobs').selectAll().where('user_id', '=', v.id).execute()).toEqual([]);
  }, 30_000);

  it('answers 502 when the speech server fails (the seconds are given back) and 503 when none is configured', async () => {
    const u = await createUser(t);
    expect((await api(t.app, 'GET', '/api/crm/voice/status', { token: u.token })).body).toEqual({ available: true });
    expect((await api(t.app, 'GET', '/api/crm/voice/status')).status).toBe(401);
    speech.respond(() => ({ status: 500 }));
    try {
      const r = await send(u.token, ok());
      expect([r.status, r.body.error]).toEqual([502, 'speech_error']);
      expect(r.text).not.toContain(speech.url);
    } finally {
      speech.respond(() => ({ text: 'привіт світ' }));
    }
    const used = await t.db.selectFrom('voice_usage').select('seconds').where('user_id', '=', u.id).executeTakeFirst();
    expect(used?.seconds ?? 0).toBe(0);

    const none = await buildTestApp();
    try {
      const w = await createUser(none);
      const r = await send(w.token, ok(), none.app);
      expect([r.status, r.body.error]).toEqual([503, 'speech_unavailable']);
      const status = await api(none.app, 'GET', '/api/crm/voice/status', { token: w.token });
      expect(status.body).toEqual({ available: false });
    } finally {
      await none.close();
    }
  }, 60_000);
});
