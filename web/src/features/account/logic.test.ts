import { describe, expect, it } from 'vitest';
import {
  billingReturnPath,
  checkoutReturn,
  closeMessage,
  cloudActions,
  inputFrame,
  linkOutcome,
  logsUrl,
  pollDone,
  resizeFrame,
  subscriptionLabel,
  terminalUrl,
} from './logic';

/** The server's own reading of a text frame (server/src/modules/cloud/cloud.rules.ts), repeated to check the frames. */
import { parseControl } from '../../../../server/src/modules/cloud/cloud.rules';

describe('terminal frames', () => {
  it('input is a control frame the server reads back exactly, even when it looks like a control frame', () => {
    for (const data of ['ls -la\r', '{"type":"resize","cols":1,"rows":1}', 'привіт', '\x1b[A'])
      expect(parseControl(inputFrame(data))).toEqual({ type: 'input', data });
  });
  it('resize frames carry whole cells clamped to 1…1000', () => {
    expect(JSON.parse(resizeFrame(120.7, 30))).toEqual({ type: 'resize', cols: 120, rows: 30 });
    expect(parseControl(resizeFrame(0, 5000))).toEqual({ type: 'resize', cols: 1, rows: 1000 });
  });
  it('the socket and stream addresses carry the chat id and the token', () => {
    expect(terminalUrl({ protocol: 'https:', host: 'crm.example:8443' }, '42', 'a.b c', 80, 24)).toBe(
      'wss://crm.example:8443/api/crm/ws/cloud/42/terminal?token=a.b+c&cols=80&rows=24',
    );
    expect(terminalUrl({ protocol: 'http:', host: '127.0.0.1:3000' }, '7', 't', 1, 2)).toMatch(/^ws:\/\/127/);
    expect(logsUrl('42', 'a.b&c')).toBe('/api/sse/cloud/42/logs?token=a.b%26c');
  });
  it('close reasons become messages', () => {
    expect(closeMessage(1000, 'idle_timeout')).toMatch(/two minutes/);
    expect(closeMessage(1000, 'exited')).toBe('The shell has exited.');
    expect(closeMessage(1011, 'container_runtime_unavailable')).toMatch(/cannot run/);
    expect(closeMessage(1006, '')).toMatch(/could not connect/);
    expect(closeMessage(1011, 'terminal_failed')).toBe('The terminal closed with an error: {reason}');
    expect(closeMessage(1000, '')).toBe('The terminal is closed.');
  });
});

describe('container status → actions', () => {
  it('follows the status table', () => {
    expect(cloudActions('none')).toEqual({ provision: true, deprovision: false, terminal: false, keys: false });
    expect(cloudActions('deleted').provision).toBe(true);
    expect(cloudActions('ready')).toEqual({ provision: false, deprovision: true, terminal: true, keys: true });
    expect(cloudActions('paused').terminal).toBe(true);
    expect(cloudActions('provisioning')).toEqual({
      provision: false,
      deprovision: false,
      terminal: false,
      keys: false,
    });
    expect(cloudActions('suspended')).toEqual({ provision: false, deprovision: true, terminal: false, keys: false });
  });
});

describe('billing return', () => {
  it('marks the return with the plan bought and polls until the plan changes or the tries run out', () => {
    expect(billingReturnPath('cloud')).toBe('/account?tab=billing&checkout=cloud');
    expect(checkoutReturn(new URLSearchParams('tab=billing&checkout=min'))).toBe('min');
    expect(checkoutReturn(new URLSearchParams('tab=billing&checkout=max'))).toBeUndefined();
    expect(checkoutReturn(new URLSearchParams('tab=billing'))).toBeUndefined();
    expect(pollDone('free', 'min', 3)).toBe(false);
    expect(pollDone('min', 'min', 1)).toBe(true);
    expect(pollDone('free', 'min', 20)).toBe(true);
    expect(subscriptionLabel('past_due')).toBe('A payment failed');
    expect(subscriptionLabel('future')).toBe('future');
  });
});

describe('CLI link outcome', () => {
  it('maps the confirmation answer', () => {
    expect(linkOutcome('', false, undefined)).toBe('missing');
    expect(linkOutcome('AB12CD', false, undefined)).toBe('ready');
    expect(linkOutcome('AB12CD', true, undefined)).toBe('linked');
    expect(linkOutcome('AB12CD', false, 410)).toBe('expired');
    expect(linkOutcome('AB12CD', false, 409)).toBe('used');
    expect(linkOutcome('AB12CD', false, 404)).toBe('invalid');
    expect(linkOutcome('AB12CD', false, 500)).toBe('error');
  });
});
