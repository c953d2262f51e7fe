/**
 * Platform settings (docs/ARCHITECTURE.md, Platform settings and their audit): the
 * allow-listed platform secrets in the sealed secret store, tested against their vendors, and an append-only
 * audit of every change, test and restart. Values are never answered, logged or audited; the settings page sees
 * a preview (platform.catalog.ts `previewOf`) and the length.
 *
 * A rotation takes effect on every instance at the next use: the LLM key resolver and the operator notifications
 * read the secret store on each call (no cache to invalidate).
 */
import type { Actor } from '../../http/auth.ts';
import { BadRequest, AppError } from '../../http/errors.ts';
import { requireAdmin } from '../../access/access.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Messenger } from '../../providers/messenger/messenger.ts';
import type { SecretStore } from '../../secrets/secret-store.ts';
import { ModelError, type ModelGateway } from '../models/model-gateway.ts';
import { modelFor } from '../models/model-tiers.ts';
import { NEVER_MANAGED, PLATFORM_SETTINGS, previewOf, type SettingDef, settingDef } from './platform.catalog.ts';
import type { PlatformRepo } from './platform.repo.ts';

/** Time limit of a vendor test, in ms (docs/ARCHITECTURE.md, Platform settings and their audit). */
export const TEST_TIMEOUT_MS = 8_000;

/** Who made a request: for the audit. */
export interface RequestMeta {
  ip: string | null;
  userAgent: string | null;
}

export interface PlatformDeps {
  repo: PlatformRepo;
  secrets: Pick<SecretStore, 'get' | 'set' | 'delete' | 'list'>;
  /** The metered model call: the LLM key is tested by a one-token call with the stored value (`platform_test`). */
  models: Pick<ModelGateway, 'complete' | 'vendor'>;
  messenger: Pick<Messenger, 'getMe'>;
  /** Roots of the vendors tested over HTTP (config `vendorUrls`). */
  vendorUrls: { codehostOauth: string; idpIssuer: string; emailApi: string };
  /** The service's sign-in callback address registered at the identity provider (sent by the client id test). */
  idpRedirectUri: string;
  log: Logger;
}

type TestResult = { ok: boolean; reason?: string; detail?: string };

/**
 * One HTTP call to a vendor within the test time limit, redirects not followed. The statuses in `refused` mean the
 * vendor does not know the value (`rejected`); any other status below 500 means it does (the request may still be
 * incomplete on purpose, e.g. an e-mail with no recipient); 5xx or no answer is `unreachable` / `timeout`. `vendor`
 * names it in the detail, which never includes the value.
 */
async function probe(
  vendor: string,
  url: string,
  init: RequestInit,
  refused: number[] | 'client_error',
): Promise<TestResult> {
  try {
    const res = await fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(TEST_TIMEOUT_MS) });
    await res.body?.cancel().catch(() => {});
    if (refused === 'client_error' ? res.status >= 400 && res.status < 500 : refused.includes(res.status))
      return { ok: false, reason: 'rejected', detail: `${vendor} refused it (HTTP ${res.status}).` };
    if (res.status < 500) return { ok: true, detail: `${vendor} accepted it.` };
    return { ok: false, reason: 'unreachable', detail: `${vendor} failed (HTTP ${res.status}).` };
  } catch (err) {
    return (err as Error).name === 'TimeoutError'
      ? { ok: false, reason: 'timeout', detail: `${vendor} did not answer within 8 s.` }
      : { ok: false, reason: 'unreachable', detail: `${vendor} could not be reached.` };
  }
}

/**
 * The authorization endpoint of the OpenID provider at `issuer` (its discovery document), within the test time
 * limit. @returns undefined when the document cannot be read or names none
 */
async function authorizationEndpoint(issuer: string): Promise<string | undefined> {
  try {
    const res = await fetch(`${issuer}/.well-known/openid-configuration`, {
      redirect: 'error',
      signal: AbortSignal.timeout(TEST_TIMEOUT_MS),
    });
    if (!res.ok) return undefined;
    const doc = (await res.json()) as { authorization_endpoint?: unknown };
    return typeof doc.authorization_endpoint === 'string' ? doc.authorization_endpoint : undefined;
  } catch {
    return undefined;
  }
}

/** 501: a key that cannot be tested on its own (the OAuth client secrets). */
class NotTestable extends AppError {
  constructor(name: string) {
    super(501, 'not_testable', `${name} cannot be tested on its own; try a sign-in instead.`);
  }
}

function defOf(name: string): SettingDef {
  if ((NEVER_MANAGED as readonly string[]).includes(name))
    throw new BadRequest('not_managed', 'This secret of the service itself is never managed here.');
  const d = settingDef(name);
  if (!d) throw new BadRequest('unknown_setting', 'This name is not a managed platform setting.');
  return d;
}

const withTimeout = <T>(p: Promise<T>, ms: number): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(Object.assign(new Error('timeout'), { name: 'TimeoutError' })), ms);
    p.then(
      (v) => (clearTimeout(t), resolve(v)),
      (e) => (clearTimeout(t), reject(e)),
    );
  });

export function createPlatformService(deps: PlatformDeps) {
  const { repo, secrets } = deps;

  async function item(d: SettingDef, meta: Map<string, { updated_at: Date; updated_by: string | null }>) {
    const value = await secrets.get(d.name);
    const m = meta.get(d.name);
    return {
      name: d.name,
      label: d.label,
      description: d.description,
      testable: d.test !== 'none',
      restartTargets: d.restartTargets,
      set: !!value,
      preview: value ? previewOf(value) : null,
      length: value ? value.length : 0,
      lastRotated: value && m ? m.updated_at : null,
      lastRotatedBy: value && m ? m.updated_by : null,
      category: d.category,
      usedIn: d.usedIn,
      getFromUrl: d.getFromUrl,
      effectAfterRotate: d.effectAfterRotate,
      riskIfLeaked: d.riskIfLeaked,
    };
  }
  const metaMap = async () => new Map((await secrets.list()).map((r) => [r.name, r]));

  return {
    /** `GET /platform/settings` (admin): every allow-listed setting, its preview and length, never the value. */
    async list(actor: Actor) {
      requireAdmin(actor);
      const meta = await metaMap();
      return { items: await Promise.all(PLATFORM_SETTINGS.map((d) => item(d, meta))) };
    },

    /**
     * `PUT /platform/settings/:name {value}` (admin): write the sealed secret and its audit entry in one transaction.
     * @returns the item as listed. @throws 400 `not_managed` / `unknown_setting`; a store failure is a 500.
     */
    async set(actor: Actor, name: string, value: string, meta: RequestMeta) {
      requireAdmin(actor);
      const d = defOf(name);
      await repo.transaction(async (tx) => {
        await secrets.set(d.name, value, actor.email, tx);
        await repo.appendAudit(
          {
            keyName: d.name,
            action: 'set',
            ok: true,
            clientIp: meta.ip,
            userAgent: meta.userAgent,
            actorEmail: actor.email,
          },
          tx,
        );
      });
      return item(d, await metaMap());
    },

    /**
     * `DELETE /platform/settings/:name` (admin): remove the secret from the store (what uses it stops at the next
     * request: the e-mail falls back to SMTP or the outbox, the sign-in button disappears) with an audit entry
     * `delete`, in one transaction. Unsetting a name that is not set succeeds too.
     * @returns the item as listed (`set: false`). @throws 400 `not_managed` / `unknown_setting`.
     */
    async unset(actor: Actor, name: string, meta: RequestMeta) {
      requireAdmin(actor);
      const d = defOf(name);
      await repo.transaction(async (tx) => {
        await secrets.delete(d.name, tx);
        await repo.appendAudit(
          {
            keyName: d.name,
            action: 'delete',
            ok: true,
            clientIp: meta.ip,
            userAgent: meta.userAgent,
            actorEmail: actor.email,
          },
          tx,
        );
      });
      return item(d, await metaMap());
    },

    /**
     * `POST /platform/settings/:name/test` (admin): one call to the vendor with the stored value, 8 s at most: the
     * LLM key through the configured LLM provider (a one-token completion, metered), the bot token through `getMe`,
     * an OAuth client id through the vendor's authorization page (the identity provider's from its discovery document,
     * with the service's callback address), the e-mail key through an empty `POST {api}/emails`.
     * @returns `{ok, reason?, detail?}`; reason `not_set`, `rejected`, `timeout` or `unreachable`.
     * @throws 501 `not_testable` for the OAuth client secrets (they cannot be tested alone).
     */
    async test(actor: Actor, name: string, meta: RequestMeta) {
      requireAdmin(actor);
      const d = defOf(name);
      if (d.test === 'none') throw new NotTestable(d.name);
      const value = await secrets.get(d.name);
      const urls = deps.vendorUrls;
      let res: TestResult;
      if (!value) res = { ok: false, reason: 'not_set', detail: `${d.name} is not set.` };
      else if (d.test === 'llm') {
        const model = modelFor('platform_test', deps.models.vendor);
        try {
          await deps.models.complete(
            { userId: actor.id, key: { given: value } },
            {
              purpose: 'platform_test',
              model,
              messages: [{ role: 'user', content: 'ping' }],
              maxTokens: 1,
              signal: AbortSignal.timeout(TEST_TIMEOUT_MS),
            },
          );
          res = { ok: true, detail: `The LLM provider accepted the key (${model}).` };
        } catch (err) {
          const kind = err instanceof ModelError ? err.kind : 'network';
          res =
            kind === 'auth'
              ? { ok: false, reason: 'rejected', detail: 'The LLM provider refused the key.' }
              : kind === 'timeout' || kind === 'aborted'
                ? { ok: false, reason: 'timeout', detail: 'The LLM provider did not answer within 8 s.' }
                : { ok: false, reason: 'unreachable', detail: `The LLM provider failed (${kind}).` };
        }
      } else if (d.test === 'codehost_id') {
        // An unknown client id: the authorization page answers 404.
        res = await probe(
          'The code host',
          `${urls.codehostOauth}/login/oauth/authorize?client_id=${encodeURIComponent(value)}`,
          {},
          [401, 403, 404],
        );
      } else if (d.test === 'idp_id') {
        // The provider's authorization endpoint (OpenID Connect discovery) asked for a code for this client id and
        // the service's callback: a known client with that callback registered is sent on to sign in (a redirect
        // or the sign-in page); an unknown client or an unregistered callback is refused (4xx).
        const endpoint = await authorizationEndpoint(urls.idpIssuer);
        res = endpoint
          ? await probe(
              'The identity provider',
              `${endpoint}${endpoint.includes('?') ? '&' : '?'}${new URLSearchParams({
                response_type: 'code',
                scope: 'openid',
                client_id: value,
                redirect_uri: deps.idpRedirectUri,
              })}`,
              {},
              'client_error',
            )
          : {
              ok: false,
              reason: 'unreachable',
              detail: 'The identity provider’s discovery document could not be read.',
            };
      } else if (d.test === 'email') {
        // An empty message: a valid key (even a sending-only one) gets 422 for the missing fields and nothing is
        // sent; an unknown or revoked key gets 401 / 403.
        res = await probe(
          'The e-mail API',
          `${urls.emailApi}/emails`,
          {
            method: 'POST',
            headers: { authorization: `Bearer ${value}`, 'content-type': 'application/json' },
            body: '{}',
          },
          [401, 403],
        );
      } else {
        try {
          const bot = await withTimeout(deps.messenger.getMe(value), TEST_TIMEOUT_MS);
          res = bot
            ? { ok: true, detail: `The messenger knows the bot @${bot.username}.` }
            : { ok: false, reason: 'rejected', detail: 'The messenger refused the token.' };
        } catch (err) {
          res =
            (err as Error).name === 'TimeoutError'
              ? { ok: false, reason: 'timeout', detail: 'The messenger did not answer within 8 s.' }
              : { ok: false, reason: 'unreachable', detail: 'The messenger could not be reached.' };
        }
      }
      await repo.appendAudit({
        keyName: d.name,
        action: 'test',
        ok: res.ok,
        clientIp: meta.ip,
        userAgent: meta.userAgent,
        actorEmail: actor.email,
      });
      return res;
    },

    /**
     * `POST /platform/settings/:name/restart` (admin): restart what is bound to the key. The service holds no
     * long-lived session on any platform key (each call reads the secret store), so nothing needs a restart and
     * `restarted` lists none; the answer says so. Audited.
     * @returns `{ok: true, restarted: string[], note}`.
     */
    async restart(actor: Actor, name: string, meta: RequestMeta) {
      requireAdmin(actor);
      const d = defOf(name);
      await repo.appendAudit({
        keyName: d.name,
        action: 'restart',
        ok: true,
        clientIp: meta.ip,
        userAgent: meta.userAgent,
        actorEmail: actor.email,
      });
      return {
        ok: true as const,
        restarted: [] as string[],
        note: d.restartTargets.length
          ? `No ${d.restartTargets.join(', ')} is running on this service: every call reads ${d.name} from the secret store, so the new value is already in use.`
          : `${d.name} takes effect on the next request; nothing to restart.`,
      };
    },

    /** `GET /platform/audit?limit&key` (admin): newest first; `limit` default 50, at most 500. */
    async audit(actor: Actor, q: { limit?: number; key?: string }) {
      requireAdmin(actor);
      const items = await repo.listAudit(Math.min(q.limit ?? 50, 500), q.key);
      return { items, count: items.length };
    },
  };
}

export type PlatformService = ReturnType<typeof createPlatformService>;
