/**
 * Team presets: a project's starting team (`teamPreset`), and the keyword map of
 * `GET /projects/suggest-preset?niche=` (docs/ARCHITECTURE.md, Projects, workers, plan limits and onboarding).
 */

/** Team preset id → worker preset ids (at most 5, so every team fits the free plan). */
export const TEAM_PRESETS: Record<string, { label: string; workers: string[] }> = {
  software: { label: 'Software product', workers: ['developer', 'reviewer', 'qa', 'devops'] },
  ecommerce: { label: 'Online shop', workers: ['developer', 'copywriter', 'seo', 'support'] },
  content: { label: 'Content and media', workers: ['copywriter', 'seo', 'marketer'] },
  marketing: { label: 'Marketing', workers: ['marketer', 'copywriter', 'data-analyst'] },
  research: { label: 'Research', workers: ['researcher', 'data-analyst'] },
  support: { label: 'Customer support', workers: ['support', 'product-manager'] },
  startup: { label: 'Startup (generalist)', workers: ['product-manager', 'developer', 'designer'] },
};
export const DEFAULT_TEAM_PRESET = 'startup';

const KEYWORDS: Array<[string, string[]]> = [
  [
    'ecommerce',
    ['shop', 'store', 'ecommerce', 'e-commerce', 'retail', 'marketplace', 'dropship', 'shopify', 'cart', 'магазин'],
  ],
  [
    'software',
    [
      'saas',
      'software',
      'app',
      'api',
      'backend',
      'frontend',
      'web',
      'mobile',
      'developer',
      'code',
      'platform',
      'devtools',
    ],
  ],
  ['content', ['blog', 'content', 'media', 'youtube', 'podcast', 'newsletter', 'writing', 'publishing', 'news']],
  ['marketing', ['marketing', 'agency', 'ads', 'advertising', 'brand', 'growth', 'smm', 'social']],
  ['research', ['research', 'science', 'analysis', 'analytics', 'data', 'academic', 'study', 'finance']],
  ['support', ['support', 'helpdesk', 'customer service', 'call center', 'service desk']],
];

/** The team preset for a free-text niche: the first keyword match (whole-word or substring), else the default. */
export function suggestTeamPreset(niche: string): string {
  const text = niche.toLowerCase();
  for (const [preset, words] of KEYWORDS) if (words.some((w) => text.includes(w))) return preset;
  return DEFAULT_TEAM_PRESET;
}
