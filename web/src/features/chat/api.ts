/** Chat with a project's workers: the history with one worker and a message to several (keys: `chatKeys`). */
import { queryOptions } from '@tanstack/react-query';
import { api, must } from '../../api/client';
import { projectKeys } from '../projects/api';
import { runKeys } from '../runs/api';
import { useInvalidatingMutation, type After } from '../mutation';

/** Query keys of the chat. */
export const chatKeys = {
  all: (project: string) => [...projectKeys.one(project), 'chat'] as const,
  history: (project: string, workerId: number | null) => [...chatKeys.all(project), 'history', workerId] as const,
};

/** The 50 latest messages with one worker (`null`: with every worker of the project). */
export const chatHistoryQuery = (project: string, workerId: number | null) =>
  queryOptions({
    queryKey: chatKeys.history(project, workerId),
    queryFn: () =>
      must(
        api.GET('/api/crm/projects/{name}/chat/history', {
          params: { path: { name: project }, query: workerId ? { worker_id: workerId, limit: 50 } : { limit: 50 } },
        }),
      ),
  });

interface Message {
  worker_ids: number[];
  text: string;
}
const sendMessage = (project: string, body: Message) =>
  must(api.POST('/api/crm/projects/{name}/message', { params: { path: { name: project } }, body }));

/** Send one message to one worker or several at once (one run each); refreshes the runs and the history. */
export function useSendToWorkers(project: string, after?: After<Awaited<ReturnType<typeof sendMessage>>, Message>) {
  return useInvalidatingMutation(
    (body: Message) => sendMessage(project, body),
    () => [runKeys.all(project), chatKeys.all(project)],
    after,
  );
}
