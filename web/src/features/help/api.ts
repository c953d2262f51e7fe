/** The help assistant: the daily allowance and asking a question (query keys from `helpKeys`). */
import { queryOptions } from '@tanstack/react-query';
import { api, must } from '../../api/client';

/** Query keys of help. */
export const helpKeys = {
  usage: () => ['help', 'usage'] as const,
};

/** Questions asked and left today. */
export const helpUsageQuery = () =>
  queryOptions({ queryKey: helpKeys.usage(), queryFn: () => must(api.GET('/api/crm/help/usage')) });

/** Ask the assistant, with the last turns as history; resolves with its reply. */
export const askHelp = (message: string, history: { role: 'user' | 'assistant'; text: string }[]) =>
  must(api.POST('/api/crm/help/chat', { body: { message, history } }));
