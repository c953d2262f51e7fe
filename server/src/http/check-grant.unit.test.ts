import { describe, expect, it } from 'vitest';
import { checkGrant, grantAllows, type TokenGrant } from './auth.ts';

const grant = (over: Partial<TokenGrant> = {}): TokenGrant => ({
  tokenId: 1,
  kind: 'personal',
  scopes: ['read'],
  projectId: null,
  projectName: null,
  ...over,
});
const code = (fn: () => void) => {
  try {
    fn();
    return 'allowed';
  } catch (err) {
    return (err as { code: string }).code;
  }
};

describe('checkGrant (what an access token may call)', () => {
  const route = { mode: 'user' as const, method: 'GET', url: '/api/crm/projects/:name/issues', params: { name: 'a' } };

  it('read is GET (and HEAD); write is everything else and includes reading', () => {
    expect(code(() => checkGrant(grant(), route))).toBe('allowed');
    expect(code(() => checkGrant(grant(), { ...route, method: 'HEAD' }))).toBe('allowed');
    expect(code(() => checkGrant(grant(), { ...route, method: 'POST' }))).toBe('insufficient_scope');
    expect(code(() => checkGrant(grant({ scopes: ['write'] }), { ...route, method: 'DELETE' }))).toBe('allowed');
    expect(grantAllows({ scopes: ['write'] }, 'read')).toBe(true);
    expect(grantAllows({ scopes: ['admin'] }, 'read')).toBe(false);
  });

  it('session-only and admin routes refuse every token; per-call routes leave scopes to the handler', () => {
    const all = grant({ scopes: ['read', 'write', 'admin'] });
    expect(code(() => checkGrant(all, { ...route, accessToken: 'refused' }))).toBe('session_required');
    expect(code(() => checkGrant(all, { ...route, mode: 'admin' }))).toBe('session_required');
    expect(code(() => checkGrant(grant(), { ...route, method: 'POST', accessToken: 'per-call' }))).toBe('allowed');
  });

  it('a bound token: its project by :name or :project, /api/auth/me, nothing else', () => {
    const bound = grant({ projectId: 7, projectName: 'a' });
    expect(code(() => checkGrant(bound, route))).toBe('allowed');
    expect(code(() => checkGrant(bound, { ...route, params: { name: 'b' } }))).toBe('token_project');
    const mcp = { ...route, url: '/api/mcp/issues/:project/:id', params: { project: 'a', id: 1 } };
    expect(code(() => checkGrant(bound, mcp))).toBe('allowed');
    expect(code(() => checkGrant(bound, { ...mcp, params: { project: 'b', id: 1 } }))).toBe('token_project');
    expect(code(() => checkGrant(bound, { ...route, url: '/api/crm/projects', params: {} }))).toBe('token_project');
    expect(code(() => checkGrant(bound, { ...route, url: '/api/auth/me', params: {} }))).toBe('allowed');
  });
});
