import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { ConfigError, loadConfig } from './config.ts';

/** The problems of an invalid environment (fails the test when it is valid). */
function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error(`expected a ConfigError for ${JSON.stringify(env)}`);
}

describe('configuration defaults', () => {
  it('PORT 8080, HOST 127.0.0.1, APP_URL derived, DATA_DIR ./data resolved, embedded database', () => {
    const c = loadConfig({});
    expect(c.port).toBe(8080);
    expect(c.host).toBe('127.0.0.1');
    expect(c.appUrl).toBe('http://127.0.0.1:8080');
    expect(c.dataDir).toBe(path.resolve('./data'));
    expect(path.isAbsolute(c.dataDir)).toBe(true);
    expect(c.databaseUrl).toBeUndefined();
    expect(c.crmSecret).toBeUndefined();
    expect(c.smtpUrl).toBeUndefined();
    expect(c.mailFrom).toBe('no-reply@localhost');
    expect(c.breachCheckUrl).toMatch(/^https:\/\//);
    expect(c.llmProvider).toBe('anthropic');
    expect(c.containerRuntime).toBe('process');
    expect(c.trustProxy).toBe(false);
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('APP_URL follows HOST and PORT (IPv6 bracketed) unless given; trailing slashes dropped', () => {
    expect(loadConfig({ HOST: '0.0.0.0', PORT: '3000' }).appUrl).toBe('http://0.0.0.0:3000');
    expect(loadConfig({ HOST: '::1' }).appUrl).toBe('http://[::1]:8080');
    expect(loadConfig({ APP_URL: 'https://crm.example.com/', PORT: '3000' }).appUrl).toBe('https://crm.example.com');
    expect(loadConfig({ DATA_DIR: 'some/dir' }).dataDir).toBe(path.resolve('some/dir'));
    expect(loadConfig({ PORT: '0' }).port).toBe(0);
  });

  it('empty values count as unset; e-mails are lower-cased', () => {
    const c = loadConfig({
      HOST: ' ',
      DATABASE_URL: '',
      SMTP_URL: '',
      ADMIN_EMAIL: '',
      LLM_PROVIDER: '',
      OPERATOR_EMAIL: 'Op@Example.COM',
    });
    expect(c.host).toBe('127.0.0.1');
    expect(c.llmProvider).toBe('anthropic');
    expect(c.databaseUrl).toBeUndefined();
    expect(c.smtpUrl).toBeUndefined();
    expect(c.adminEmail).toBeUndefined();
    expect(c.operatorEmail).toBe('op@example.com');
  });

  it('BREACH_CHECK_URL=off disables the check; a given base is used without trailing slash', () => {
    expect(loadConfig({ BREACH_CHECK_URL: 'off' }).breachCheckUrl).toBeUndefined();
    expect(loadConfig({ BREACH_CHECK_URL: 'http://127.0.0.1:9999/' }).breachCheckUrl).toBe('http://127.0.0.1:9999');
  });

  it('reads valid values of the other variables', () => {
    const c = loadConfig({
      DATABASE_URL: 'postgres://u@db:5432/crm',
      SMTP_URL: 'smtps://user:pass@mail:465',
      LLM_PROVIDER: 'openai',
      TRUST_PROXY: '1',
      ADMIN_EMAIL: 'Boss@Example.com',
      ADMIN_PASSWORD: 'long enough',
      PLATFORM_LLM_KEY: 'sk-platform',
      MASTER_BOT_TOKEN: ' ',
    });
    expect(c.databaseUrl).toBe('postgres://u@db:5432/crm');
    expect(c.smtpUrl).toBe('smtps://user:pass@mail:465');
    expect(c.llmProvider).toBe('openai');
    expect(c.llmBaseUrl).toBe('https://api.openai.com/v1');
    expect(c.trustProxy).toBe(true);
    expect(c.adminEmail).toBe('boss@example.com');
    expect(c.managedSecretsFromEnv).toEqual({ PLATFORM_LLM_KEY: 'sk-platform' });
    expect(loadConfig({ DATABASE_URL: 'memory://' }).databaseUrl).toBe('memory://');
    expect(loadConfig({}).speechMaxFileBytes).toBe(24 * 1024 * 1024);
    expect(loadConfig({ SPEECH_MAX_FILE_BYTES: '500000' }).speechMaxFileBytes).toBe(500_000);
  });
});

describe('invalid configuration', () => {
  const cases: Array<[Record<string, string>, string]> = [
    [{ PORT: 'abc' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ LLM_PROVIDER: 'foo' }, 'LLM_PROVIDER'],
    [{ SMTP_URL: 'http://x' }, 'SMTP_URL'],
    [{ ADMIN_EMAIL: 'admin@example.com' }, 'ADMIN_PASSWORD'],
    [{ ADMIN_EMAIL: 'not an e-mail', ADMIN_PASSWORD: 'long enough' }, 'ADMIN_EMAIL'],
    [{ ADMIN_EMAIL: 'admin@example.com', ADMIN_PASSWORD: 'short' }, 'ADMIN_PASSWORD'],
    [{ APP_URL: 'ftp://x' }, 'APP_URL'],
    [{ BREACH_CHECK_URL: 'nope' }, 'BREACH_CHECK_URL'],
    [{ CONTAINER_RUNTIME: 'podman' }, 'CONTAINER_RUNTIME'],
    [{ TRUST_PROXY: 'yes' }, 'TRUST_PROXY'],
    [{ CRM_SECRET: 'too-short' }, 'CRM_SECRET'],
    [{ PLAN_PRICE_UAH_MIN: 'cheap' }, 'PLAN_PRICE_UAH_MIN'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ SPEECH_MAX_FILE_BYTES: '1000' }, 'SPEECH_MAX_FILE_BYTES'],
  ];
  for (const [env, name] of cases) {
    it(`${JSON.stringify(env)} gives one ConfigError line naming ${name}`, () => {
      const p = problems(env);
      expect(p).toHaveLength(1);
      expect(p[0].startsWith(name)).toBe(true);
    });
  }

  it("names a union's allowed values in one line", () => {
    expect(problems({ LLM_PROVIDER: 'foo' })).toEqual([
      'LLM_PROVIDER="foo": must be one of: "anthropic", "openai", ""',
    ]);
  });

  it('lists every problem at once, in the error message too', () => {
    let err: ConfigError | undefined;
    try {
      loadConfig({ PORT: 'abc', DATABASE_URL: 'mysql://x', LLM_PROVIDER: 'foo', SMTP_URL: 'http://x' });
    } catch (e) {
      err = e as ConfigError;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect(err!.problems).toHaveLength(4);
    for (const name of ['PORT', 'DATABASE_URL', 'LLM_PROVIDER', 'SMTP_URL']) expect(err!.message).toContain(name);
    expect(err!.message).toMatch(/^invalid configuration/);
  });

  it('never echoes secrets: secret-named values and URL credentials are hidden', () => {
    const text = [
      ...problems({ CRM_SECRET: 'hunter2-short' }),
      ...problems({ SECRET_ENCRYPTION_KEY: 'hunter3-short' }),
      ...problems({ ADMIN_EMAIL: 'a@b.c', ADMIN_PASSWORD: 'hunter4' }),
      ...problems({ DATABASE_URL: 'mysql://root:hunter5@db/crm' }),
      ...problems({ SMTP_URL: 'http://mailer:hunter6@mail:25' }),
      ...problems({ LLM_BASE_URL: 'ftp://key:hunter7@llm' }),
    ].join('\n');
    for (const secret of ['hunter2', 'hunter3', 'hunter4', 'hunter5', 'hunter6', 'hunter7'])
      expect(text).not.toContain(secret);
    expect(text).toContain('CRM_SECRET');
    expect(text).toContain('DATABASE_URL');
  });
});

describe('starting with an invalid configuration', () => {
  it('npm start with PORT=abc exits with code 2 and one clear stderr line, no stack trace', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'server/src/main.ts'], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        PORT: 'abc',
        DATA_DIR: path.resolve('.tmp', 'never-created'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.stdout.on('data', (d) => (stdout += d));
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    expect(code).toBe(2);
    expect(stderr).toMatch(/invalid configuration/);
    expect(stderr).toMatch(/^\s+- PORT="abc": .+$/m);
    expect(stderr).not.toMatch(/\bat .+:\d+:\d+/);
    expect(stdout).toBe('');
  });
});
