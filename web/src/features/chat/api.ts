/** Chat with a project's workers: the history with one worker and a message to several (keys: `chatKeys`). */
import { queryOptions } from '@tanstack/react-query';
import { api, must } from '../../api/client';
import { projectKeys } from '../projects/api';
import { runKeys } from '../runs/api';
import { useInvalidatingMutation, type After } from '../mutation';

/** Query keys of the chat. */
export const chatKeys = {
  history: (project: string, workerId: number) => [...projectKeys.one(project), 'chat', 'history', workerId] as const,
};

/** The 50 latest messages with one worker. */
export const chatHistoryQuery = (project: string, workerId: number) =>
  queryOptions({
    queryKey: chatKeys.history(project, workerId),
    queryFn: () =>
      must(
        api.GET('/api/crm/projects/{name}/chat/history', {
          params: { path: { name: project }, query: { worker_id: workerId, limit: 50 } },
        }),
      ),
  });

interface Message {
  worker_ids: number[];
  text: string;
}
const sendMessage = (project: string, body: Message) =>
  must(api.POST('/api/crm/projects/{name}/message', { params: { path: { name: project } }, body }));

/** Send one message to several workers at once (one run each); refreshes the runs. */
export function useSendToWorkers(project: string, after?: After<Awaited<ReturnType<typeof sendMessage>>, Message>) {
  return useInvalidatingMutation(
    (body: Message) => sendMessage(project, body),
    () => [runKeys.all(project)],
    after,
  );
}
