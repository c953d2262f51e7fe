/**
 * Pure logic of the account pages (no React, no browser): the cloud terminal's socket frames and close reasons,
 * the container status → actions table, the terminal size from its box, and the billing return query.
 */
import { msg } from '../../i18n';

/** The plans checkout sells. */
export const CHECKOUT_PLANS = ['min', 'cloud'] as const;
export type CheckoutPlan = (typeof CHECKOUT_PLANS)[number];

/**
 * The terminal's input frame: keystrokes as the JSON control frame `{"type":"input","data"}`, so that typed text
 * that happens to look like a control frame (`{"type":"resize",…}`) is never taken for one.
 */
export const inputFrame = (data: string): string => JSON.stringify({ type: 'input', data });

/** The resize frame `{"type":"resize","cols","rows"}`; sizes are whole cells, clamped to 1…1000. */
export function resizeFrame(cols: number, rows: number): string {
  const c = (n: number) => Math.max(1, Math.min(1000, Math.floor(n) || 1));
  return JSON.stringify({ type: 'resize', cols: c(cols), rows: c(rows) });
}

/** The socket address `/api/crm/ws/cloud/:userId/terminal?token=…&cols=&rows=` on the page's origin (ws/wss). */
export function terminalUrl(
  location: { protocol: string; host: string },
  chatId: string,
  token: string,
  cols: number,
  rows: number,
): string {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const q = new URLSearchParams({ token, cols: String(cols), rows: String(rows) });
  return `${scheme}//${location.host}/api/crm/ws/cloud/${encodeURIComponent(chatId)}/terminal?${q}`;
}

/** The log stream's address `/api/sse/cloud/:userId/logs?token=…`. */
export const logsUrl = (chatId: string, token: string): string =>
  `/api/sse/cloud/${encodeURIComponent(chatId)}/logs?token=${encodeURIComponent(token)}`;

/**
 * The message (an English msgid for `t()`) for a closed terminal socket: its close code and reason.
 * `idle_timeout` (120 s without a frame), `exited` (the shell ended), 1011 with an error code, or a refused or
 * broken connection (1006: the upgrade was refused, e.g. no container or no runtime).
 */
export function closeMessage(code: number, reason: string): string {
  if (reason === 'idle_timeout') return msg('The terminal closed after two minutes without activity.');
  if (reason === 'exited') return msg('The shell has exited.');
  if (reason === 'container_runtime_unavailable') return msg('This server cannot run cloud containers right now.');
  if (reason === 'container_not_found') return msg('You have no cloud container; create one first.');
  if (code === 1000) return msg('The terminal is closed.');
  if (code === 1006) return msg('The terminal could not connect. Check that the container is ready and try again.');
  return msg('The terminal closed with an error: {reason}');
}

/** What the user can do with the container in a status (the spec's container status table). */
export interface CloudActions {
  provision: boolean;
  deprovision: boolean;
  terminal: boolean;
  keys: boolean;
}

/**
 * The actions a container `status` allows: `none`/`deleted` → provision; `ready`/`paused` → terminal (a paused
 * container resumes on connect), keys and checks, remove; `provisioning` → wait; `suspended` → remove only.
 */
export function cloudActions(status: string): CloudActions {
  switch (status) {
    case 'none':
    case 'deleted':
      return { provision: true, deprovision: false, terminal: false, keys: false };
    case 'ready':
    case 'paused':
      return { provision: false, deprovision: true, terminal: true, keys: true };
    case 'suspended':
      return { provision: false, deprovision: true, terminal: false, keys: false };
    default:
      return { provision: false, deprovision: false, terminal: false, keys: false };
  }
}

/** The label (msgid) of a container status. */
export function statusLabel(status: string): string {
  return (
    {
      none: msg('No container'),
      provisioning: msg('Being created'),
      ready: msg('Ready'),
      paused: msg('Paused (resumes when you connect)'),
      suspended: msg('Suspended'),
      deleted: msg('Removed'),
    }[status] ?? status
  );
}

/** The billing tab's address after a checkout of `plan` (the payer returns here; `checkout=` marks the return). */
export const billingReturnPath = (plan: CheckoutPlan): string => `/account?tab=billing&checkout=${plan}`;

/** The plan a checkout return names (`?checkout=min|cloud`), else undefined. */
export function checkoutReturn(params: URLSearchParams): CheckoutPlan | undefined {
  const p = params.get('checkout');
  return CHECKOUT_PLANS.find((x) => x === p);
}

/** Whether polling after a checkout return may stop: the plan is now the one bought, or `tries` ran out. */
export const pollDone = (plan: string | undefined, bought: CheckoutPlan, tries: number, maxTries = 20): boolean =>
  plan === bought || tries >= maxTries;

/** What the CLI link page shows. */
export type LinkOutcome = 'missing' | 'ready' | 'linked' | 'expired' | 'used' | 'invalid' | 'error';

/**
 * The CLI link page's state from the code in its address, whether the confirmation succeeded, and the HTTP
 * status of a failed confirmation (0: no answer): 410 expired, 409 used, 404 or 400 invalid, else error.
 */
export function linkOutcome(code: string, confirmed: boolean, failedStatus: number | undefined): LinkOutcome {
  if (!code) return 'missing';
  if (confirmed) return 'linked';
  if (failedStatus === undefined) return 'ready';
  if (failedStatus === 410) return 'expired';
  if (failedStatus === 409) return 'used';
  if (failedStatus === 404 || failedStatus === 400) return 'invalid';
  return 'error';
}

/** The label (msgid) of a subscription status of the billing status. */
export function subscriptionLabel(status: string): string {
  return (
    {
      none: msg('None (never paid)'),
      active: msg('Active'),
      past_due: msg('A payment failed'),
      cancelled: msg('Cancelled'),
      lapsed: msg('Lapsed after failed payments'),
    }[status] ?? status
  );
}
