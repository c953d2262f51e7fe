import { msg } from '../../../i18n';

/** Labels of funnel steps, segments and latency stages (message ids). */
export const STEP_LABELS: Record<string, string> = {
  signup: msg('Signed up'),
  email_verified: msg('E-mail verified'),
  first_project: msg('First project'),
  first_worker: msg('First worker'),
  first_message: msg('First message'),
  first_response: msg('First agent response'),
  return_day2: msg('Came back on day 2'),
  workers: msg('Workers'),
  cli: msg('Command-line client'),
  skill: msg('Skill'),
  bot: msg('Messenger bot'),
  issue: msg('Issue'),
};
export const SEGMENTS = [
  { value: 'all', label: msg('Everyone') },
  { value: 'web', label: msg('Web') },
  { value: 'tg', label: msg('Messenger') },
  { value: 'cli', label: msg('Command line') },
];
export const STAGES = [
  ['queue_ms', msg('Queue')],
  ['prep_ms', msg('Preparation')],
  ['gen_ms', msg('Generation')],
  ['total_ms', msg('Total')],
] as const;
