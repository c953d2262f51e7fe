/**
 * The typed API client: `openapi-fetch` over the types generated from the service's OpenAPI document
 * (`schema.gen.d.ts`, written by web/build.js). Every call carries the signed-in user's token; an answer 401
 * to a signed-in call signs the user out.
 */
import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './schema.gen';
import { session } from '../session';

export type { paths };

/** The error envelope every failed answer carries: `{error, message, ...fields}`. */
export interface ApiError {
  error: string;
  message: string;
  [field: string]: unknown;
}

/** Thrown by `must()` for a failed answer; `status` is the HTTP status. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly body: ApiError,
  ) {
    super(body.message || body.error);
  }
}

const auth: Middleware = {
  onRequest({ request }) {
    const token = session.token();
    if (token && !request.headers.has('authorization')) request.headers.set('authorization', `Bearer ${token}`);
    return request;
  },
  onResponse({ request, response }) {
    if (response.status === 401 && request.headers.has('authorization')) session.signOut();
    return response;
  },
};

// fetch is looked up per call (not captured at load), so a page always uses the window's current one.
export const api = createClient<paths>({ baseUrl: '', fetch: (req) => globalThis.fetch(req) });
api.use(auth);

/**
 * The data of an openapi-fetch answer, or an `ApiFailure` thrown with its envelope.
 * @example const { projects } = await must(api.GET('/api/crm/projects'));
 */
export async function must<T>(
  call: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<NonNullable<T>> {
  const { data, error, response } = await call;
  if (!response.ok || data === undefined) {
    const body = (error && typeof error === 'object' ? error : {}) as Partial<ApiError>;
    throw new ApiFailure(response.status, {
      ...body,
      error: body.error ?? 'http_' + response.status,
      message: body.message ?? response.statusText,
    });
  }
  return data as NonNullable<T>;
}

/** Headers with the user's token, for the few calls made with plain fetch (streams, uploads with progress). */
export function authHeaders(): Record<string, string> {
  const token = session.token();
  return token ? { authorization: `Bearer ${token}` } : {};
}

/** The JSON body of an operation, e.g. `JsonBody<'/api/crm/projects/create', 'post'>`. */
export type JsonBody<P extends keyof paths, M extends 'post' | 'put' | 'patch' | 'delete'> =
  NonNullable<paths[P][M]> extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
