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

const Bool01 = Type.Optional(
  Type.Union([Type.Literal('0'), Type.Literal('1'), Type.Literal('true'), Type.Literal('false'), Type.Literal('')]),
);

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
  CLI_LINK_POLL_MS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,5}$' })),
  CLI_LINK_TIMEOUT_MS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,7}$' })),
  SHUTDOWN_TIMEOUT_MS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,6}$' })),
  // Cloud containers (modules/cloud).
  CLOUD_IMAGE: Type.Optional(Type.String({ pattern: '^(|[A-Za-z0-9][A-Za-z0-9._/:@-]{0,254})$' })),
  CLOUD_CODEHOST_SSH: Type.Optional(Type.String({ pattern: '^(|[A-Za-z0-9._-]+@[A-Za-z0-9.-]+)$' })),
  CLOUD_TERMINAL_IDLE_MS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,7}$' })),
  // Messenger workers' pollers (long polling of bound bots).
  MESSENGER_POLL_TIMEOUT_S: Type.Optional(
    Type.String({ pattern: '^([1-9]|[1-4][0-9]|50)$', description: 'a whole number of seconds from 1 to 50' }),
  ),
  MESSENGER_LEASE_MS: Type.Optional(
    Type.String({ pattern: '^[1-9][0-9]{3,5}$', description: 'milliseconds from 1000 to 999999' }),
  ),
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
  // Meeting transcripts.
  TRANSCRIPTS_UPLOAD_LIMIT_BYTES: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,11}$' })),
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
  /** ffmpeg and ffprobe binaries (Debian's `ffmpeg` package; default: on the PATH). */
  ffmpegPath: string;
  ffprobePath: string | undefined;
  pageReaderUrl: string | undefined;
  /** Gettext catalogs `<dir>/<locale>/<domain>.po` (translation feedback patches them); absolute. */
  localesDir: string;
  messengerApiUrl: string;
  /** Vendors the platform-settings test calls: code host and identity provider OAuth roots, the e-mail API. */
  vendorUrls: { codehostOauth: string; idpOauth: string; emailApi: string };
  payprovApiUrl: string;
  planPricesUah: { min: number; cloud: number; max: number };
  containerRuntime: 'docker' | 'process' | 'none';
  dockerHost: string | undefined;
  /**
   * Cloud containers: the Docker image (`CLOUD_IMAGE`), the code host's SSH login tested by ssh-verify
   * (`CLOUD_CODEHOST_SSH`), and the terminal socket's idle timeout (`CLOUD_TERMINAL_IDLE_MS`, 120 s).
   */
  cloud: { image: string; codehostSsh: string; terminalIdleMs: number };
  trustProxy: boolean;
  disableMessengerNotify: boolean;
  /** The built web UI's folder (`index.html`, `assets/`); `undefined`: the checkout's `web/dist`. */
  webDistDir: string | undefined;
  logLevel: string;
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
  /** Project file uploads: bytes per file (specification, Limits → Files: 100 MB) and the clone time limit (ms). */
  files: { uploadLimitBytes: number; cloneTimeoutMs: number };
  /** The CLI link stream: poll interval and lifetime (ms; specification, Limits → CLI: about 1.5 s, 10 minutes). */
  cli: { linkPollMs: number; linkTimeoutMs: number };
  /**
   * Research notes: hosts, addresses and CIDR ranges that web and YouTube sources may fetch although they are
   * not public (`OUTBOUND_ALLOW_PRIVATE`), where YouTube watch pages are read, the transcript API, yt-dlp.
   */
  notes: { allow: string[]; youtubeBaseUrl: string; transcriptApiUrl: string | undefined; ytDlpPath: string };
  /**
   * Workers' outside MCP servers: the time limit of connecting or of one tool call (`MCP_CALL_TIMEOUT_MS`, 30 s)
   * and the characters of a tool result handed to the model (`MCP_RESULT_MAX_CHARS`, 64 000); their addresses
   * follow `notes.allow`.
   */
  mcp: { callTimeoutMs: number; resultMaxChars: number };
  /** Managed secrets found in the environment (imported into the secret store at start). */
  managedSecretsFromEnv: Partial<Record<ManagedSecretName, string>>;
  /** Meeting transcripts: largest upload in bytes (specification, Limits → Transcripts: 1 GB). */
  transcripts: { uploadLimitBytes: number };
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
  for (const name of MANAGED_SECRET_NAMES) {
    const v = nonEmpty(env[name]);
    if (v) managed[name] = v;
  }
  const price = (v: string | undefined, d: number) => (v ? Number(v) : d);
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
    ffmpegPath: nonEmpty(e.FFMPEG_PATH) ?? 'ffmpeg',
    ffprobePath: nonEmpty(e.FFPROBE_PATH),
    pageReaderUrl: nonEmpty(e.PAGE_READER_URL)?.replace(/\/+$/, ''),
    localesDir: path.resolve(nonEmpty(e.LOCALES_DIR) ?? 'locales'),
    messengerApiUrl: (nonEmpty(e.MESSENGER_API_URL) ?? 'https://api.telegram.org').replace(/\/+$/, ''),
    vendorUrls: {
      codehostOauth: (nonEmpty(e.CODEHOST_OAUTH_URL) ?? 'https://github.com').replace(/\/+$/, ''),
      idpOauth: (nonEmpty(e.IDP_OAUTH_URL) ?? 'https://accounts.google.com').replace(/\/+$/, ''),
      emailApi: (nonEmpty(e.EMAIL_API_URL) ?? 'https://api.resend.com').replace(/\/+$/, ''),
    },
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
    },
    trustProxy: truthy(e.TRUST_PROXY),
    disableMessengerNotify: truthy(e.CRM_DISABLE_MESSENGER_NOTIFY),
    webDistDir: nonEmpty(e.WEB_DIST_DIR) ? path.resolve(e.WEB_DIST_DIR!) : undefined,
    logLevel: nonEmpty(e.LOG_LEVEL) ?? 'info',
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS ? Number(e.SHUTDOWN_TIMEOUT_MS) : 10_000,
    files: {
      uploadLimitBytes: e.FILES_UPLOAD_LIMIT_BYTES ? Number(e.FILES_UPLOAD_LIMIT_BYTES) : 100 * 1024 * 1024,
      cloneTimeoutMs: e.FILES_CLONE_TIMEOUT_MS ? Number(e.FILES_CLONE_TIMEOUT_MS) : 60_000,
    },
    cli: {
      linkPollMs: e.CLI_LINK_POLL_MS ? Number(e.CLI_LINK_POLL_MS) : 1500,
      linkTimeoutMs: e.CLI_LINK_TIMEOUT_MS ? Number(e.CLI_LINK_TIMEOUT_MS) : 600_000,
    },
    messengerPoll: {
      timeoutS: e.MESSENGER_POLL_TIMEOUT_S ? Number(e.MESSENGER_POLL_TIMEOUT_S) : 25,
      leaseMs: e.MESSENGER_LEASE_MS ? Number(e.MESSENGER_LEASE_MS) : 30_000,
    },
    notes: {
      allow: (e.OUTBOUND_ALLOW_PRIVATE ?? '')
        .split(',')
        .map((x) => x.trim().replace(/^\[|\]$/g, ''))
        .filter(Boolean),
      youtubeBaseUrl: (nonEmpty(e.YOUTUBE_BASE_URL) ?? 'https://www.youtube.com').replace(/\/+$/, ''),
      transcriptApiUrl: nonEmpty(e.YOUTUBE_TRANSCRIPT_API_URL),
      ytDlpPath: nonEmpty(e.YTDLP_PATH) ?? 'yt-dlp',
    },
    mcp: {
      callTimeoutMs: e.MCP_CALL_TIMEOUT_MS ? Number(e.MCP_CALL_TIMEOUT_MS) : 30_000,
      resultMaxChars: e.MCP_RESULT_MAX_CHARS ? Number(e.MCP_RESULT_MAX_CHARS) : 64_000,
    },
    managedSecretsFromEnv: managed,
    transcripts: {
      uploadLimitBytes: e.TRANSCRIPTS_UPLOAD_LIMIT_BYTES
        ? Math.min(Number(e.TRANSCRIPTS_UPLOAD_LIMIT_BYTES), 1024 * 1024 * 1024)
        : 1024 * 1024 * 1024,
    },
  });
}
