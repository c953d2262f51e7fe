/**
 * Configuration: one schema for every environment variable (docs/configuration.md describes each).
 *
 * `loadConfig(env)` validates the environment once at start and returns a frozen, typed object.
 * Invalid values stop the process with one clear line per problem (never a stack trace).
 */
import { Type, type Static } from 'typebox';
import type { TLocalizedValidationError } from 'typebox/error';
import { Value } from 'typebox/value';
import path from 'node:path';
import { RATE_LIMIT_NAMES, type RateLimits } from './http/throttle.ts';

const Bool01 = Type.Optional(
  Type.Union([Type.Literal('0'), Type.Literal('1'), Type.Literal('true'), Type.Literal('false'), Type.Literal('')]),
);

const RATE_LIMIT_PATTERN = '^(off|[1-9][0-9]{0,6}/[1-9][0-9]{0,4}[smhd])$';

/**
 * Default rate limits (docs/configuration.md, Rate limits): sign-in 10 attempts per account and 100 per address
 * in 15 minutes (then exponential backoff), 20 registrations and 20 password resets per address an hour; per
 * user 60 messages or chats a minute, 300 upload requests a minute (chunks included), 20 exports an hour,
 * 10 clones in 10 minutes.
 */
export const DEFAULT_RATE_LIMITS: Record<(typeof RATE_LIMIT_NAMES)[number], string> = {
  login_account: '10/15m',
  login_address: '100/15m',
  signup_address: '20/1h',
  password_reset_address: '20/1h',
  messages: '60/1m',
  uploads: '300/1m',
  exports: '20/1h',
  clones: '10/10m',
};

/** `10/15m` → `{max: 10, windowMs: 900000}`; `off` → null. */
export function parseRateLimit(v: string): { max: number; windowMs: number } | null {
  if (v === 'off') return null;
  const m = /^(\d+)\/(\d+)([smhd])$/.exec(v);
  if (!m) throw new Error(`not a rate limit: ${v}`);
  const unit = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[3] as 's' | 'm' | 'h' | 'd'];
  return { max: Number(m[1]), windowMs: Number(m[2]) * unit };
}

/** The raw environment as the service reads it (all strings). */
export const EnvSchema = Type.Object({
  PORT: Type.Optional(Type.String({ pattern: '^[0-9]{1,5}$', description: 'listen port' })),
  HOST: Type.Optional(Type.String({ minLength: 1 })),
  APP_URL: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$' })),
  DATA_DIR: Type.Optional(Type.String({ minLength: 1 })),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^(postgres(ql)?://.+|memory://.*|)$' })),
  CRM_SECRET: Type.Optional(Type.String({ minLength: 16 })),
  SECRET_ENCRYPTION_KEY: Type.Optional(Type.String({ minLength: 16 })),
  ADMIN_EMAIL: Type.Optional(Type.String({ pattern: '^(|[^@\\s]+@[^@\\s]+)$' })),
  ADMIN_PASSWORD: Type.Optional(Type.String()),
  OPERATOR_EMAIL: Type.Optional(Type.String({ pattern: '^(|[^@\\s]+@[^@\\s]+)$' })),
  OPERATOR_CHAT_ID: Type.Optional(Type.String()),
  SMTP_URL: Type.Optional(Type.String({ pattern: '^(|smtps?://.+)$' })),
  MAIL_FROM: Type.Optional(Type.String()),
  MAIL_RETRY_DELAY_S: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,4}$' })),
  BREACH_CHECK_URL: Type.Optional(Type.String({ pattern: '^(off|https?://.+|)$' })),
  LLM_PROVIDER: Type.Optional(Type.Union([Type.Literal('anthropic'), Type.Literal('openai'), Type.Literal('')])),
  LLM_BASE_URL: Type.Optional(Type.String({ pattern: '^(|https?://.+)$' })),
  PLATFORM_LLM_KEY: Type.Optional(Type.String()),
  EMBEDDINGS_URL: Type.Optional(Type.String({ pattern: '^(|https?://.+)$' })),
  EMBEDDINGS_MODEL: Type.Optional(Type.String()),
  EMBEDDINGS_KEY: Type.Optional(Type.String()),
  SPEECH_URL: Type.Optional(Type.String({ pattern: '^(|https?://.+)$' })),
  SPEECH_MODEL: Type.Optional(Type.String()),
  SPEECH_KEY: Type.Optional(Type.String()),
  SPEECH_MAX_FILE_BYTES: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{5,9}$' })),
  FFMPEG_PATH: Type.Optional(Type.String()),
  FFPROBE_PATH: Type.Optional(Type.String()),
  PAGE_READER_URL: Type.Optional(Type.String({ pattern: '^(|https?://.+)$' })),
  LOCALES_DIR: Type.Optional(Type.String()),
  MESSENGER_API_URL: Type.Optional(Type.String({ pattern: '^(|https?://.+)$' })),
  CODEHOST_OAUTH_URL: Type.Optional(Type.String({ pattern: '^(|https?://.+)$' })),
  IDP_OAUTH_URL: Type.Optional(Type.String({ pattern: '^(|https?://.+)$' })),
  IDP_ISSUER_URL: Type.Optional(Type.String({ pattern: '^(|https?://.+)$' })),
  IDP_NAME: Type.Optional(Type.String({ maxLength: 60 })),
  CODEHOST_API_URL: Type.Optional(Type.String({ pattern: '^(|https?://.+)$' })),
  EMAIL_API_URL: Type.Optional(Type.String({ pattern: '^(|https?://.+)$' })),
  MASTER_BOT_TOKEN: Type.Optional(Type.String()),
  EMAIL_API_KEY: Type.Optional(Type.String()),
  CODEHOST_CLIENT_ID: Type.Optional(Type.String()),
  CODEHOST_CLIENT_SECRET: Type.Optional(Type.String()),
  IDP_CLIENT_ID: Type.Optional(Type.String()),
  IDP_CLIENT_SECRET: Type.Optional(Type.String()),
  PAYPROV_API_URL: Type.Optional(Type.String({ pattern: '^(|https?://.+)$' })),
  PAYPROV_MERCHANT_TOKEN: Type.Optional(Type.String()),
  PLAN_PRICE_UAH_MIN: Type.Optional(Type.String({ pattern: '^[0-9]+(\\.[0-9]{1,2})?$' })),
  PLAN_PRICE_UAH_CLOUD: Type.Optional(Type.String({ pattern: '^[0-9]+(\\.[0-9]{1,2})?$' })),
  PLAN_PRICE_UAH_MAX: Type.Optional(Type.String({ pattern: '^[0-9]+(\\.[0-9]{1,2})?$' })),
  CONTAINER_RUNTIME: Type.Optional(
    Type.Union([Type.Literal('docker'), Type.Literal('process'), Type.Literal('none'), Type.Literal('')]),
  ),
  DOCKER_HOST: Type.Optional(Type.String()),
  TRUST_PROXY: Bool01,
  CRM_DISABLE_MESSENGER_NOTIFY: Bool01,
  // Web UI.
  WEB_DIST_DIR: Type.Optional(Type.String()),
  FILES_UPLOAD_LIMIT_BYTES: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,11}$' })),
  FILES_CLONE_TIMEOUT_MS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,7}$' })),
  // Storage: the free disk kept under DATA_DIR, the per-plan quotas (the usage area).
  DISK_FREE_FLOOR_MB: Type.Optional(
    Type.String({ pattern: '^[0-9]{1,9}$', description: 'a whole number of megabytes (MiB)' }),
  ),
  STORAGE_QUOTAS_MB: Type.Optional(
    Type.String({
      pattern: '^([a-z_]+=([0-9]{1,9}|off))(,[a-z_]+=([0-9]{1,9}|off))*$',
      description: 'plan=megabytes pairs separated by commas, e.g. free=1024,max=51200 (off: no quota)',
    }),
  ),
  CLI_LINK_POLL_MS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,5}$' })),
  CLI_LINK_TIMEOUT_MS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,7}$' })),
  SHUTDOWN_TIMEOUT_MS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,6}$' })),
  // Cloud containers (modules/cloud).
  CLOUD_IMAGE: Type.Optional(Type.String({ pattern: '^(|[A-Za-z0-9][A-Za-z0-9._/:@-]{0,254})$' })),
  CLOUD_CODEHOST_SSH: Type.Optional(Type.String({ pattern: '^(|[A-Za-z0-9._-]+@[A-Za-z0-9.-]+)$' })),
  CLOUD_TERMINAL_IDLE_MS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,7}$' })),
  CLOUD_ALLOW_UNCAPPED: Bool01,
  CLOUD_HOME_MB: Type.Optional(Type.String({ pattern: '^[0-9]{1,7}$', description: 'MiB, 0 to 9999999' })),
  CLOUD_LOG_LINES_PER_S: Type.Optional(
    Type.String({ pattern: '^[1-9][0-9]{0,5}$', description: 'lines a second, 1 to 999999' }),
  ),
  CLOUD_LOG_KEEP_LINES: Type.Optional(
    Type.String({ pattern: '^[1-9][0-9]{1,6}$', description: 'lines, 10 to 9999999' }),
  ),
  CLOUD_EGRESS_FIREWALL: Type.Optional(Type.Union([Type.Literal('nft'), Type.Literal('external'), Type.Literal('')])),
  CLOUD_SECCOMP_PROFILE: Type.Optional(Type.String()),
  // Messenger workers' pollers (long polling of bound bots).
  MESSENGER_POLL_TIMEOUT_S: Type.Optional(
    Type.String({ pattern: '^([1-9]|[1-4][0-9]|50)$', description: 'a whole number of seconds from 1 to 50' }),
  ),
  MESSENGER_LEASE_MS: Type.Optional(
    Type.String({ pattern: '^[1-9][0-9]{3,5}$', description: 'milliseconds from 1000 to 999999' }),
  ),
  // Instance leases (crash recovery).
  INSTANCE_LEASE_MS: Type.Optional(
    Type.String({ pattern: '^[1-9][0-9]{3,5}$', description: 'milliseconds from 1000 to 999999' }),
  ),
  INSTANCE_NAME: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9._:@-]{0,200}$' })),
  // Research notes: outbound fetches of web and YouTube sources.
  OUTBOUND_ALLOW_PRIVATE: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9.:/_\\[\\], -]*$' })),
  YOUTUBE_BASE_URL: Type.Optional(Type.String({ pattern: '^(|https?://.+)$' })),
  YOUTUBE_TRANSCRIPT_API_URL: Type.Optional(Type.String({ pattern: '^(|https?://.+)$' })),
  YTDLP_PATH: Type.Optional(Type.String()),
  // Workers' outside MCP servers: time limit of a connection or tool call, characters of a result.
  MCP_CALL_TIMEOUT_MS: Type.Optional(
    Type.String({ pattern: '^[1-9][0-9]{2,5}$', description: 'milliseconds from 100 to 999999' }),
  ),
  MCP_RESULT_MAX_CHARS: Type.Optional(
    Type.String({ pattern: '^[1-9][0-9]{2,6}$', description: 'characters from 100 to 9999999' }),
  ),
  // Approvals: seconds a tool call waits for a person before it is refused.
  APPROVAL_TIMEOUT_S: Type.Optional(
    Type.String({ pattern: '^[1-9][0-9]{0,7}$', description: 'seconds from 1 to 99999999' }),
  ),
  // Meeting transcripts.
  TRANSCRIPTS_UPLOAD_LIMIT_BYTES: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,11}$' })),
  LOG_FLUSH_MS: Type.Optional(
    Type.String({ pattern: '^(0|[1-9][0-9]{0,4})$', description: 'milliseconds, 0 to 99999' }),
  ),
  // Observability.
  METRICS_TOKEN: Type.Optional(Type.String({ minLength: 16, description: 'at least 16 characters' })),
  OTEL_EXPORTER_OTLP_ENDPOINT: Type.Optional(Type.String({ pattern: '^(|https?://.+)$' })),
  OTEL_SERVICE_NAME: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9._-]{0,100}$' })),
  // Rate limits (http/throttle.ts): `<max>/<window>` (window: a number and s, m, h or d) or `off`.
  ...Object.fromEntries(
    RATE_LIMIT_NAMES.map((n) => [
      `RATE_LIMIT_${n.toUpperCase()}`,
      Type.Optional(
        Type.String({ pattern: RATE_LIMIT_PATTERN, description: 'like 10/15m (at most 10 per 15 minutes) or off' }),
      ),
    ]),
  ),
  LOG_LEVEL: Type.Optional(
    Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent', ''].map((l) => Type.Literal(l))),
  ),
});
export type Env = Static<typeof EnvSchema>;

/**
 * Managed platform secrets: imported from the environment into the secret store at start when the store does not
 * hold them yet; afterwards the store is authoritative (docs/configuration.md, Managed secrets).
 */
export const MANAGED_SECRET_NAMES = [
  'PLATFORM_LLM_KEY',
  'CODEHOST_CLIENT_ID',
  'CODEHOST_CLIENT_SECRET',
  'IDP_CLIENT_ID',
  'IDP_CLIENT_SECRET',
  'MASTER_BOT_TOKEN',
  'EMAIL_API_KEY',
  'PAYPROV_MERCHANT_TOKEN',
] as const;
export type ManagedSecretName = (typeof MANAGED_SECRET_NAMES)[number];

export interface Config {
  port: number;
  host: string;
  appUrl: string;
  dataDir: string;
  /** `undefined`: embedded PGlite under dataDir; `memory://`: throw-away PGlite; otherwise a PostgreSQL URL. */
  databaseUrl: string | undefined;
  /** Token signing key; filled from DATA_DIR/keys.json by `ensureKeys` when not set. */
  crmSecret: string | undefined;
  secretEncryptionKey: string | undefined;
  adminEmail: string | undefined;
  adminPassword: string | undefined;
  operatorEmail: string | undefined;
  operatorChatId: string | undefined;
  smtpUrl: string | undefined;
  mailFrom: string;
  /** Seconds before a failed e-mail's second delivery attempt; each later one waits four times longer. */
  mailRetryDelayS: number;
  /** `undefined` when disabled (`off`). */
  breachCheckUrl: string | undefined;
  llmProvider: 'anthropic' | 'openai';
  llmBaseUrl: string;
  embeddingsUrl: string | undefined;
  embeddingsModel: string;
  embeddingsKey: string | undefined;
  speechUrl: string | undefined;
  speechModel: string;
  speechKey: string | undefined;
  /** Largest audio file sent to the speech server in one request; longer audio goes in pieces (bytes). */
  speechMaxFileBytes: number;
  /**
   * ffmpeg and ffprobe binaries as configured (`FFMPEG_PATH`, `FFPROBE_PATH`); unset: the system's on the PATH,
   * else the copies `npm install` brought (`resolveMediaTools` in lib/media.ts).
   */
  ffmpegPath: string | undefined;
  ffprobePath: string | undefined;
  pageReaderUrl: string | undefined;
  /** Gettext catalogs `<dir>/<locale>/<domain>.po` (translation feedback patches them); absolute. */
  localesDir: string;
  messengerApiUrl: string;
  /**
   * The providers' roots: the code host's OAuth pages (`CODEHOST_OAUTH_URL`, also the origin of its clone URLs)
   * and API (`CODEHOST_API_URL`), the identity provider's OpenID Connect issuer (`IDP_ISSUER_URL`, discovery at
   * `{issuer}/.well-known/openid-configuration`), the e-mail API (`EMAIL_API_URL`).
   */
  vendorUrls: { codehostOauth: string; codehostApi: string; idpIssuer: string; emailApi: string };
  /** The identity provider's name on the sign-in button (`IDP_NAME`; default: the issuer's host name). */
  idpName: string;
  payprovApiUrl: string;
  planPricesUah: { min: number; cloud: number; max: number };
  containerRuntime: 'docker' | 'process' | 'none';
  dockerHost: string | undefined;
  /**
   * Cloud containers: the Docker image (`CLOUD_IMAGE`), the code host's SSH login tested by ssh-verify
   * (`CLOUD_CODEHOST_SSH`), the terminal socket's idle timeout (`CLOUD_TERMINAL_IDLE_MS`, 120 s), and whether
   * sandboxes may run without kernel caps where the server cannot enforce them (`CLOUD_ALLOW_UNCAPPED`, off);
   * for the `docker` runtime, who loads the egress guard (`CLOUD_EGRESS_FIREWALL`: `nft` this service, default, or
   * `external` the operator) and the system-call profile's path on a Podman engine's host (`CLOUD_SECCOMP_PROFILE`).
   */
  cloud: {
    image: string;
    codehostSsh: string;
    terminalIdleMs: number;
    allowUncapped: boolean;
    /** Size of a capped sandbox's home file system in MiB (`CLOUD_HOME_MB`, 2048; 0: a plain folder). */
    homeMb: number;
    /** Container output lines logged per user a second (`CLOUD_LOG_LINES_PER_S`, 50; bursts of ten seconds' worth). */
    logLinesPerSecond: number;
    /** Log lines kept per user (`CLOUD_LOG_KEEP_LINES`, 2000): older ones are dropped as new ones come. */
    logKeepLines: number;
    egressFirewall: 'nft' | 'external';
    seccompProfile: string | undefined;
  };
  trustProxy: boolean;
  disableMessengerNotify: boolean;
  /** The built web UI's folder (`index.html`, `assets/`); `undefined`: the checkout's `web/dist`. */
  webDistDir: string | undefined;
  logLevel: string;
  /**
   * Longest time (ms) an info or debug log line waits before it is written (LOG_FLUSH_MS, default 100): a kill
   * loses at most that much of them; warnings and errors are written at once; 0 writes every line at once.
   */
  logFlushMs: number;
  /**
   * Milliseconds a SIGTERM/SIGINT may take to finish in-flight requests and running jobs before the process
   * exits anyway (code 1); a second signal exits at once. Default 10 000.
   */
  shutdownTimeoutMs: number;
  /**
   * Messenger workers: `getUpdates` long-polling wait (s, default 25) and the poller lease (ms, default 30 000):
   * one instance polls a bot; another takes over when the holder has not renewed it for this long.
   */
  messengerPoll: { timeoutS: number; leaseMs: number };
  /**
   * This process's lease (docs/ARCHITECTURE.md, Crash recovery): valid `leaseMs` (INSTANCE_LEASE_MS, default
   * 10 000) and renewed every fifth of it; when it lapses another instance takes back the process's work.
   * `name` (INSTANCE_NAME, default `host:port`) is how a restarted process recognizes its own predecessor.
   */
  instances: { leaseMs: number; name: string | undefined };
  /**
   * Project file uploads: bytes per file (docs/api.md, Uploads), the clone time limit (ms), and the
   * non-public hosts, addresses and ranges a clone may still reach (`OUTBOUND_ALLOW_PRIVATE`, as note sources).
   */
  files: { uploadLimitBytes: number; cloneTimeoutMs: number; allow: string[] };
  /**
   * Storage (docs/configuration.md, Storage quotas): the free disk under DATA_DIR below which writes are refused
   * (`DISK_FREE_FLOOR_MB`, default 1024 MiB, in bytes here) and quota overrides per plan in bytes (`STORAGE_QUOTAS_MB`;
   * null: no quota for that plan).
   */
  storage: { diskFloorBytes: number; quotas: Record<string, number | null> };
  /** The CLI link stream: poll interval and lifetime (ms; docs/ARCHITECTURE.md, The command-line client). */
  cli: { linkPollMs: number; linkTimeoutMs: number };
  /**
   * Research notes: hosts, addresses and CIDR ranges that web and YouTube sources may fetch although they are
   * not public (`OUTBOUND_ALLOW_PRIVATE`), where YouTube watch pages are read, the transcript API, yt-dlp.
   */
  notes: { allow: string[]; youtubeBaseUrl: string; transcriptApiUrl: string | undefined; ytDlpPath: string };
  /**
   * Observability: the bearer token of `GET /metrics` (`METRICS_TOKEN`; unset: 503 `metrics_disabled`), and
   * OpenTelemetry traces to the OTLP/HTTP collector at `OTEL_EXPORTER_OTLP_ENDPOINT` (unset: off) as
   * `OTEL_SERVICE_NAME` (default `crm-service`).
   */
  observability: { metricsToken: string | undefined; otlpEndpoint: string | undefined; serviceName: string };
  /**
   * Workers' outside MCP servers: the time limit of connecting or of one tool call (`MCP_CALL_TIMEOUT_MS`, 30 s)
   * and the characters of a tool result handed to the model (`MCP_RESULT_MAX_CHARS`, 64 000); their addresses
   * follow `notes.allow`.
   */
  mcp: { callTimeoutMs: number; resultMaxChars: number };
  /**
   * Approvals (docs/ARCHITECTURE.md, Approvals): seconds a tool call waits for a person's decision before it is
   * `expired` and refused to the model (`APPROVAL_TIMEOUT_S`, default 86400).
   */
  approvals: { timeoutS: number };
  /** Managed secrets found in the environment (imported into the secret store at start). */
  managedSecretsFromEnv: Partial<Record<ManagedSecretName, string>>;
  /** Meeting transcripts: largest upload in bytes (docs/ARCHITECTURE.md, Meeting transcripts and voice dictation). */
  transcripts: { uploadLimitBytes: number };
  /** Rate limits by name (`RATE_LIMIT_<NAME>`; null: off), counted in the database across instances. */
  rateLimits: RateLimits;
}

export class ConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

const nonEmpty = (v: string | undefined): string | undefined =>
  v === undefined || v.trim() === '' ? undefined : v.trim();
const truthy = (v: string | undefined): boolean => v === '1' || v === 'true';

/** Default of `SPEECH_MAX_FILE_BYTES`: 24 MiB, under OpenAI's 25 MB per transcription upload. */
export const DEFAULT_SPEECH_MAX_FILE_BYTES = 24 * 1024 * 1024;

/**
 * Validate the environment and build the configuration (docs/configuration.md).
 * @param env usually `process.env`; only the names of `EnvSchema` are read.
 * @throws ConfigError listing every invalid variable with what was expected.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const picked: Record<string, string> = {};
  for (const key of Object.keys(EnvSchema.properties)) {
    const v = env[key];
    if (v !== undefined) picked[key] = v;
  }
  const problems: string[] = [];
  // TypeBox reports each branch of a union on its own: one line per variable, a union's literals listed.
  const errorsByName = new Map<string, TLocalizedValidationError[]>();
  for (const err of Value.Errors(EnvSchema, picked)) {
    const name = err.instancePath.replace(/^\//, '');
    errorsByName.set(name, [...(errorsByName.get(name) ?? []), err]);
  }
  for (const [name, errs] of errorsByName) {
    const allowed = errs.flatMap((err) => (err.keyword === 'const' ? [JSON.stringify(err.params.allowedValue)] : []));
    const message = errs.some((err) => err.keyword === 'anyOf')
      ? `must be one of: ${allowed.join(', ')}`
      : errs[0].message;
    // Secret-named values are hidden; any other value is shown without URL credentials (`scheme://user:pass@` → `scheme://***@`).
    const shown =
      name.includes('SECRET') || name.includes('KEY') || name.includes('PASSWORD') || name.includes('TOKEN')
        ? '(hidden)'
        : JSON.stringify(picked[name].replace(/\/\/[^/@\s]*@/, '//***@'));
    problems.push(`${name}=${shown}: ${message}`);
  }
  const e = picked as Env;
  const port = e.PORT ? Number(e.PORT) : 8080;
  if (!problems.some((p) => p.startsWith('PORT=')) && !(port >= 0 && port <= 65535))
    problems.push(`PORT=${e.PORT}: must be between 0 and 65535`);
  if (nonEmpty(e.ADMIN_EMAIL) && !nonEmpty(e.ADMIN_PASSWORD))
    problems.push('ADMIN_PASSWORD: required when ADMIN_EMAIL is set');
  if (nonEmpty(e.ADMIN_PASSWORD) && (e.ADMIN_PASSWORD as string).length < 8)
    problems.push('ADMIN_PASSWORD: must be at least 8 characters');
  if (problems.length) throw new ConfigError(problems);

  const host = nonEmpty(e.HOST) ?? '127.0.0.1';
  const llmProvider = (nonEmpty(e.LLM_PROVIDER) as 'anthropic' | 'openai' | undefined) ?? 'anthropic';
  const breach = nonEmpty(e.BREACH_CHECK_URL);
  const managed: Partial<Record<ManagedSecretName, string>> = {};
  const outboundAllow = (e.OUTBOUND_ALLOW_PRIVATE ?? '')
    .split(',')
    .map((x) => x.trim().replace(/^\[|\]$/g, ''))
    .filter(Boolean);
  for (const name of MANAGED_SECRET_NAMES) {
    const v = nonEmpty(env[name]);
    if (v) managed[name] = v;
  }
  const price = (v: string | undefined, d: number) => (v ? Number(v) : d);
  const root = (v: string | undefined, d: string) => (nonEmpty(v) ?? d).replace(/\/+$/, '');
  const vendorUrls = {
    codehostOauth: root(e.CODEHOST_OAUTH_URL, 'https://github.com'),
    codehostApi: root(e.CODEHOST_API_URL, 'https://api.github.com'),
    // IDP_OAUTH_URL: the earlier name of the issuer's root, still read when IDP_ISSUER_URL is unset.
    idpIssuer: root(e.IDP_ISSUER_URL ?? e.IDP_OAUTH_URL, 'https://accounts.google.com'),
    emailApi: root(e.EMAIL_API_URL, 'https://api.resend.com'),
  };
  return Object.freeze({
    port,
    host,
    appUrl: (nonEmpty(e.APP_URL) ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`).replace(/\/+$/, ''),
    dataDir: path.resolve(nonEmpty(e.DATA_DIR) ?? './data'),
    databaseUrl: nonEmpty(e.DATABASE_URL),
    crmSecret: nonEmpty(e.CRM_SECRET),
    secretEncryptionKey: nonEmpty(e.SECRET_ENCRYPTION_KEY),
    adminEmail: nonEmpty(e.ADMIN_EMAIL)?.toLowerCase(),
    adminPassword: nonEmpty(e.ADMIN_PASSWORD),
    operatorEmail: nonEmpty(e.OPERATOR_EMAIL)?.toLowerCase(),
    operatorChatId: nonEmpty(e.OPERATOR_CHAT_ID),
    smtpUrl: nonEmpty(e.SMTP_URL),
    mailFrom: nonEmpty(e.MAIL_FROM) ?? 'no-reply@localhost',
    mailRetryDelayS: e.MAIL_RETRY_DELAY_S ? Number(e.MAIL_RETRY_DELAY_S) : 60,
    breachCheckUrl: breach === 'off' ? undefined : (breach ?? 'https://api.pwnedpasswords.com').replace(/\/+$/, ''),
    llmProvider,
    llmBaseUrl: (
      nonEmpty(e.LLM_BASE_URL) ??
      (llmProvider === 'anthropic' ? 'https://api.anthropic.com' : 'https://api.openai.com/v1')
    ).replace(/\/+$/, ''),
    embeddingsUrl: nonEmpty(e.EMBEDDINGS_URL)?.replace(/\/+$/, ''),
    embeddingsModel: nonEmpty(e.EMBEDDINGS_MODEL) ?? 'text-embedding-3-small',
    embeddingsKey: nonEmpty(e.EMBEDDINGS_KEY),
    speechUrl: nonEmpty(e.SPEECH_URL)?.replace(/\/+$/, ''),
    speechModel: nonEmpty(e.SPEECH_MODEL) ?? 'whisper-1',
    speechKey: nonEmpty(e.SPEECH_KEY),
    speechMaxFileBytes: e.SPEECH_MAX_FILE_BYTES ? Number(e.SPEECH_MAX_FILE_BYTES) : DEFAULT_SPEECH_MAX_FILE_BYTES,
    ffmpegPath: nonEmpty(e.FFMPEG_PATH),
    ffprobePath: nonEmpty(e.FFPROBE_PATH),
    pageReaderUrl: nonEmpty(e.PAGE_READER_URL)?.replace(/\/+$/, ''),
    localesDir: path.resolve(nonEmpty(e.LOCALES_DIR) ?? 'locales'),
    messengerApiUrl: (nonEmpty(e.MESSENGER_API_URL) ?? 'https://api.telegram.org').replace(/\/+$/, ''),
    vendorUrls,
    idpName: nonEmpty(e.IDP_NAME) ?? new URL(vendorUrls.idpIssuer).hostname,
    payprovApiUrl: (nonEmpty(e.PAYPROV_API_URL) ?? 'https://api.monobank.ua').replace(/\/+$/, ''),
    planPricesUah: {
      min: price(e.PLAN_PRICE_UAH_MIN, 199),
      cloud: price(e.PLAN_PRICE_UAH_CLOUD, 799),
      max: price(e.PLAN_PRICE_UAH_MAX, 479),
    },
    containerRuntime: (nonEmpty(e.CONTAINER_RUNTIME) as Config['containerRuntime'] | undefined) ?? 'process',
    dockerHost: nonEmpty(e.DOCKER_HOST),
    cloud: {
      image: nonEmpty(e.CLOUD_IMAGE) ?? 'debian:bookworm-slim',
      codehostSsh: nonEmpty(e.CLOUD_CODEHOST_SSH) ?? 'git@github.com',
      terminalIdleMs: e.CLOUD_TERMINAL_IDLE_MS ? Number(e.CLOUD_TERMINAL_IDLE_MS) : 120_000,
      homeMb: e.CLOUD_HOME_MB ? Number(e.CLOUD_HOME_MB) : 2048,
      logLinesPerSecond: e.CLOUD_LOG_LINES_PER_S ? Number(e.CLOUD_LOG_LINES_PER_S) : 50,
      logKeepLines: e.CLOUD_LOG_KEEP_LINES ? Number(e.CLOUD_LOG_KEEP_LINES) : 2000,
      allowUncapped: truthy(e.CLOUD_ALLOW_UNCAPPED),
      egressFirewall: e.CLOUD_EGRESS_FIREWALL === 'external' ? ('external' as const) : ('nft' as const),
      seccompProfile: nonEmpty(e.CLOUD_SECCOMP_PROFILE),
    },
    trustProxy: truthy(e.TRUST_PROXY),
    disableMessengerNotify: truthy(e.CRM_DISABLE_MESSENGER_NOTIFY),
    webDistDir: nonEmpty(e.WEB_DIST_DIR) ? path.resolve(e.WEB_DIST_DIR!) : undefined,
    logLevel: nonEmpty(e.LOG_LEVEL) ?? 'info',
    logFlushMs: e.LOG_FLUSH_MS ? Number(e.LOG_FLUSH_MS) : 100,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS ? Number(e.SHUTDOWN_TIMEOUT_MS) : 10_000,
    files: {
      uploadLimitBytes: e.FILES_UPLOAD_LIMIT_BYTES ? Number(e.FILES_UPLOAD_LIMIT_BYTES) : 100 * 1024 * 1024,
      cloneTimeoutMs: e.FILES_CLONE_TIMEOUT_MS ? Number(e.FILES_CLONE_TIMEOUT_MS) : 60_000,
      allow: outboundAllow,
    },
    cli: {
      linkPollMs: e.CLI_LINK_POLL_MS ? Number(e.CLI_LINK_POLL_MS) : 1500,
      linkTimeoutMs: e.CLI_LINK_TIMEOUT_MS ? Number(e.CLI_LINK_TIMEOUT_MS) : 600_000,
    },
    messengerPoll: {
      timeoutS: e.MESSENGER_POLL_TIMEOUT_S ? Number(e.MESSENGER_POLL_TIMEOUT_S) : 25,
      leaseMs: e.MESSENGER_LEASE_MS ? Number(e.MESSENGER_LEASE_MS) : 30_000,
    },
    instances: {
      leaseMs: e.INSTANCE_LEASE_MS ? Number(e.INSTANCE_LEASE_MS) : 10_000,
      name: nonEmpty(e.INSTANCE_NAME),
    },
    notes: {
      allow: outboundAllow,
      youtubeBaseUrl: (nonEmpty(e.YOUTUBE_BASE_URL) ?? 'https://www.youtube.com').replace(/\/+$/, ''),
      transcriptApiUrl: nonEmpty(e.YOUTUBE_TRANSCRIPT_API_URL),
      ytDlpPath: nonEmpty(e.YTDLP_PATH) ?? 'yt-dlp',
    },
    observability: {
      metricsToken: nonEmpty(e.METRICS_TOKEN),
      otlpEndpoint: nonEmpty(e.OTEL_EXPORTER_OTLP_ENDPOINT)?.replace(/\/+$/, ''),
      serviceName: nonEmpty(e.OTEL_SERVICE_NAME) ?? 'crm-service',
    },
    mcp: {
      callTimeoutMs: e.MCP_CALL_TIMEOUT_MS ? Number(e.MCP_CALL_TIMEOUT_MS) : 30_000,
      resultMaxChars: e.MCP_RESULT_MAX_CHARS ? Number(e.MCP_RESULT_MAX_CHARS) : 64_000,
    },
    approvals: { timeoutS: e.APPROVAL_TIMEOUT_S ? Number(e.APPROVAL_TIMEOUT_S) : 86_400 },
    managedSecretsFromEnv: managed,
    rateLimits: Object.fromEntries(
      RATE_LIMIT_NAMES.map((n) => [
        n,
        parseRateLimit(nonEmpty(env[`RATE_LIMIT_${n.toUpperCase()}`]) ?? DEFAULT_RATE_LIMITS[n]),
      ]),
    ) as RateLimits,
    storage: {
      diskFloorBytes: (e.DISK_FREE_FLOOR_MB ? Number(e.DISK_FREE_FLOOR_MB) : 1024) * 1024 * 1024,
      quotas: Object.fromEntries(
        (nonEmpty(e.STORAGE_QUOTAS_MB) ?? '')
          .split(',')
          .filter(Boolean)
          .map((pair) => {
            const [plan, mb] = pair.split('=');
            return [plan, mb === 'off' ? null : Number(mb) * 1024 * 1024];
          }),
      ),
    },
    transcripts: {
      uploadLimitBytes: e.TRANSCRIPTS_UPLOAD_LIMIT_BYTES
        ? Math.min(Number(e.TRANSCRIPTS_UPLOAD_LIMIT_BYTES), 1024 * 1024 * 1024)
        : 1024 * 1024 * 1024,
    },
  });
}
