import { describe, expect, it } from 'vitest';
import { previewToolResult, summarizeToolInput, TOOL_RESULT_PREVIEW_BYTES } from './tool-result.ts';

describe('tool result preview', () => {
  it('keeps a short text whole', () => {
    expect(previewToolResult('Issue #3 is yours.')).toEqual({
      preview: 'Issue #3 is yours.',
      bytes: 18,
      truncated: false,
      json: false,
    });
  });

  it('cuts at 4 KiB of UTF-8 without splitting a character and gives the whole length', () => {
    const text = 'я'.repeat(5000); // 2 bytes each
    const r = previewToolResult(text);
    expect(r.bytes).toBe(10_000);
    expect(r.truncated).toBe(true);
    expect(Buffer.byteLength(r.preview)).toBeLessThanOrEqual(TOOL_RESULT_PREVIEW_BYTES);
    expect(r.preview).toBe('я'.repeat(TOOL_RESULT_PREVIEW_BYTES / 2));
    const odd = previewToolResult(`a${'€'.repeat(3000)}`); // 3 bytes each after one
    expect(Buffer.byteLength(odd.preview)).toBe(1 + 3 * 1365);
    expect(odd.preview.endsWith('€')).toBe(true);
  });

  it('redacts secret-named JSON keys and shows JSON indented', () => {
    const r = previewToolResult(
      '{"user":"ann","api_key":"k-123456","nested":{"Password":"hunter2"},"total_tokens":42}',
    );
    expect(r.json).toBe(true);
    expect(JSON.parse(r.preview)).toEqual({
      user: 'ann',
      api_key: '[redacted]',
      nested: { Password: '[redacted]' },
      total_tokens: 42,
    });
    expect(r.preview).toContain('\n  "user": "ann"');
  });

  it('redacts secrets in text: query tokens, Bearer credentials, KEY=value lines and known key shapes', () => {
    const text = [
      'GET https://api.test/v1?token=abcdef123456&page=2',
      'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig',
      'GITHUB_TOKEN=ghs_0123456789abcdefghij',
      'db_password: s3cr3t!',
      'key sk-ant-api03-abcdefghijklmnopqrstuvwxyz and ghp_abcdefghijklmnopqrstuvwxyz0123',
      '-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----',
      'input tokens: 120, max_tokens=300',
    ].join('\n');
    const r = previewToolResult(text);
    for (const secret of ['abcdef123456', 'eyJhbGci', 'ghs_0123', 's3cr3t', 'sk-ant-api03', 'ghp_abc', 'MIIEow'])
      expect(r.preview).not.toContain(secret);
    expect(r.preview).toContain('page=2');
    expect(r.preview).toContain('input tokens: 120, max_tokens=300');
  });

  it('summarizes the input with its secrets redacted, cut at 200 characters', () => {
    expect(summarizeToolInput({ path: 'a.md', token: 'xyz' })).toBe('{"path":"a.md","token":"[redacted]"}');
    const long = summarizeToolInput({ content: 'x'.repeat(500) });
    expect(long).toHaveLength(201);
    expect(long.endsWith('…')).toBe(true);
  });

  it('redacts hostile text in one pass (before the fix, 1 MB of `a-a-…` ran for hours: this test timed out)', () => {
    for (const hostile of [
      'a-'.repeat(500_000),
      'x_token'.repeat(100_000),
      '-----BEGIN RSA PRIVATE KEY-----'.repeat(30_000),
    ]) {
      const r = previewToolResult(hostile);
      expect(r.truncated).toBe(true);
      // The whole length, its redacted head as redacted (the PEM headers' head shrinks to one `[redacted]`).
      expect(r.bytes).toBeLessThanOrEqual(Buffer.byteLength(hostile));
      expect(r.bytes).toBeGreaterThan(Buffer.byteLength(hostile) - 4 * TOOL_RESULT_PREVIEW_BYTES);
    }
    // The summary of an input too.
    expect(summarizeToolInput({ path: 'a-'.repeat(500_000) })).toHaveLength(201);
  });
});
