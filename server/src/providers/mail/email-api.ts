/**
 * The transactional e-mail API's wire protocol (docs/configuration.md, E-mail): `POST {EMAIL_API_URL}/emails`
 * with `Authorization: Bearer <EMAIL_API_KEY>` and `{from, to: [...], subject, html, text, headers?}`; the vendor
 * answers 200 `{id}`, or an error status with `{name?, message?}`.
 */

/** Time limit of one call to the e-mail API, in ms. */
export const EMAIL_API_TIMEOUT_MS = 15_000;

/** One message as the e-mail API takes it. */
export interface EmailApiMessage {
  from: string;
  to: string[];
  subject: string;
  html: string;
  text: string;
  headers?: Record<string, string>;
}

/** The vendor refused or failed the message; `status` is its HTTP status (undefined: no answer). */
export class EmailApiError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/**
 * Send one message through the e-mail API.
 * @param root the API root (`EMAIL_API_URL`, no trailing slash)
 * @param key the API key; never part of an error message
 * @returns the vendor's message id
 * @throws EmailApiError for a non-2xx answer (its status and the vendor's message, at most 200 characters),
 *   no answer within 15 s, or an unreachable vendor
 */
export async function sendThroughEmailApi(root: string, key: string, msg: EmailApiMessage): Promise<{ id: string }> {
  let res: Response;
  try {
    res = await fetch(`${root}/emails`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(msg),
      redirect: 'error',
      signal: AbortSignal.timeout(EMAIL_API_TIMEOUT_MS),
    });
  } catch (err) {
    throw new EmailApiError(
      (err as Error).name === 'TimeoutError'
        ? 'the e-mail API did not answer within 15 s'
        : 'the e-mail API could not be reached',
    );
  }
  const body = (await res.json().catch(() => ({}))) as { id?: unknown; message?: unknown; name?: unknown };
  if (!res.ok) {
    const said = typeof body.message === 'string' ? body.message : typeof body.name === 'string' ? body.name : '';
    const clean = said.split(key).join('***').replace(/\s+/g, ' ').slice(0, 200);
    throw new EmailApiError(`the e-mail API answered HTTP ${res.status}${clean ? `: ${clean}` : ''}`, res.status);
  }
  return { id: typeof body.id === 'string' ? body.id : '' };
}
