import { describe, expect, it } from 'vitest';
import { PLATFORM_SETTINGS, previewOf, settingDef } from './platform.catalog.ts';

describe('platform settings catalog', () => {
  it('allows exactly the seven names, never the service keys', () => {
    expect(PLATFORM_SETTINGS.map((d) => d.name)).toEqual([
      'PLATFORM_LLM_KEY',
      'CODEHOST_CLIENT_ID',
      'CODEHOST_CLIENT_SECRET',
      'IDP_CLIENT_ID',
      'IDP_CLIENT_SECRET',
      'MASTER_BOT_TOKEN',
      'EMAIL_API_KEY',
    ]);
    expect(settingDef('CRM_SECRET')).toBeUndefined();
    expect(settingDef('SECRET_ENCRYPTION_KEY')).toBeUndefined();
    for (const d of PLATFORM_SETTINGS)
      if (d.category === 'oauth' || d.category === 'email') expect(d.restartTargets).toEqual([]);
  });
  it('previews 12 + … + 4 characters of long values and less of short ones', () => {
    expect(previewOf('sk-ant-api03-abcdefghijklmnopqrstuvwxyz')).toBe('sk-ant-api03…wxyz');
    expect(previewOf('12345678')).toBe('12…8');
    const v = 'abcdefghijklmnop';
    expect(previewOf(v).replace('…', '').length).toBeLessThanOrEqual(v.length / 2);
  });
});
