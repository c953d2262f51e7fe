/**
 * The platform secrets an administrator manages (docs/ARCHITECTURE.md, Platform settings and their audit), with what
 * the settings page shows of each. `CRM_SECRET` and `SECRET_ENCRYPTION_KEY` are never managed. Pure data and rules.
 */

export type SettingCategory = 'llm' | 'oauth' | 'messenger' | 'email';

/**
 * How a key can be tested against its vendor: `llm` a one-token completion, `bot` the bot API's getMe, `codehost_id`
 * and `idp_id` the vendor's OAuth authorization page for the client id, `email` an empty message to the e-mail
 * API; `none` (the OAuth client secrets) cannot be tested alone.
 */
export type TestKind = 'llm' | 'bot' | 'codehost_id' | 'idp_id' | 'email' | 'none';

export interface SettingDef {
  name: string;
  label: string;
  description: string;
  category: SettingCategory;
  test: TestKind;
  /** What must restart to use a new value (empty: the next request uses it). */
  restartTargets: string[];
  usedIn: string[];
  getFromUrl: string;
  effectAfterRotate: string;
  riskIfLeaked: string;
}

export const PLATFORM_SETTINGS: readonly SettingDef[] = [
  {
    name: 'PLATFORM_LLM_KEY',
    label: 'Platform LLM key',
    description: 'The LLM key of trial projects, the help assistant and other platform features.',
    category: 'llm',
    test: 'llm',
    restartTargets: ['worker sessions on the platform key'],
    usedIn: ['trial projects', 'help assistant', 'billing summary fallback'],
    getFromUrl: 'https://console.anthropic.com/settings/keys',
    effectAfterRotate: 'The next model call on every instance uses the new key; running agent sessions restart.',
    riskIfLeaked: 'Anyone can spend the platform LLM budget.',
  },
  {
    name: 'CODEHOST_CLIENT_ID',
    label: 'Code host OAuth client id',
    description: 'The OAuth application id users connect their code host account with.',
    category: 'oauth',
    test: 'codehost_id',
    restartTargets: [],
    usedIn: ['code host connection', 'private repository clones'],
    getFromUrl: 'https://github.com/settings/developers',
    effectAfterRotate:
      'The next connection uses it; a connection started before may fail once and succeeds on retry. Tokens already granted keep working.',
    riskIfLeaked: 'Low on its own: the id is public in sign-in links.',
  },
  {
    name: 'CODEHOST_CLIENT_SECRET',
    label: 'Code host OAuth client secret',
    description: 'The OAuth application secret users connect their code host account with.',
    category: 'oauth',
    test: 'none',
    restartTargets: [],
    usedIn: ['code host connection', 'private repository clones'],
    getFromUrl: 'https://github.com/settings/developers',
    effectAfterRotate:
      'The next connection uses it; a connection started before may fail once and succeeds on retry. Tokens already granted keep working.',
    riskIfLeaked: 'Someone can impersonate the service to the code host.',
  },
  {
    name: 'IDP_CLIENT_ID',
    label: 'Identity provider OAuth client id',
    description: 'The OAuth client id of the identity-provider sign-in.',
    category: 'oauth',
    test: 'idp_id',
    restartTargets: [],
    usedIn: ['sign-in with the identity provider', 'linking it in the account settings'],
    getFromUrl: 'https://console.cloud.google.com/apis/credentials',
    effectAfterRotate: 'The next sign-in uses it; a sign-in started before may fail once and succeeds on retry.',
    riskIfLeaked: 'Low on its own: the id is public in sign-in links.',
  },
  {
    name: 'IDP_CLIENT_SECRET',
    label: 'Identity provider OAuth client secret',
    description: 'The OAuth client secret of the identity-provider sign-in.',
    category: 'oauth',
    test: 'none',
    restartTargets: [],
    usedIn: ['sign-in with the identity provider', 'linking it in the account settings'],
    getFromUrl: 'https://console.cloud.google.com/apis/credentials',
    effectAfterRotate: 'The next sign-in uses it; a sign-in started before may fail once and succeeds on retry.',
    riskIfLeaked: 'Someone can impersonate the service to the identity provider.',
  },
  {
    name: 'MASTER_BOT_TOKEN',
    label: 'Operator bot token',
    description: 'The messenger bot that notifies the operator (feedback reports).',
    category: 'messenger',
    test: 'bot',
    restartTargets: ['operator bot'],
    usedIn: ['operator notifications'],
    getFromUrl: 'https://t.me/BotFather',
    effectAfterRotate: 'The next notification uses the new token; the bot session restarts.',
    riskIfLeaked: 'Anyone can send messages as the operator bot and read its updates.',
  },
  {
    name: 'EMAIL_API_KEY',
    label: 'E-mail API key',
    description: 'The key of the transactional e-mail API; while it is set every e-mail goes through the API.',
    category: 'email',
    test: 'email',
    restartTargets: [],
    usedIn: ['transactional e-mail (verification, password reset, notices)'],
    getFromUrl: 'https://resend.com/api-keys',
    effectAfterRotate: 'The next e-mail on every instance uses it; unset, e-mail goes over SMTP or to the outbox.',
    riskIfLeaked: 'Anyone can send e-mail in the service’s name.',
  },
];

/** Names that are secrets of the service itself and never managed here, even by admins. */
export const NEVER_MANAGED = ['CRM_SECRET', 'SECRET_ENCRYPTION_KEY'] as const;

/** The definition of an allowed name, or undefined. */
export const settingDef = (name: string): SettingDef | undefined => PLATFORM_SETTINGS.find((d) => d.name === name);

/**
 * What the settings page shows of a value: a 12-character prefix, an ellipsis and a 4-character suffix; shorter
 * values show proportionally less (a third as prefix, a sixth as suffix), so at least half is never shown.
 */
export function previewOf(value: string): string {
  const pre = Math.min(12, Math.floor(value.length / 3));
  const suf = Math.min(4, Math.floor(value.length / 6));
  return `${value.slice(0, pre)}…${suf ? value.slice(-suf) : ''}`;
}
