/** Feedback from any page: a report (bug, feature, other) and a translation suggestion. */
import { api, must, type JsonBody } from '../../api/client';

/** Send a feedback report. */
export const sendFeedback = (body: JsonBody<'/api/crm/feedback', 'post'>) =>
  must(api.POST('/api/crm/feedback', { body }));

/** Suggest a better translation of one message. */
export const suggestTranslation = (body: JsonBody<'/api/crm/feedback/translation', 'post'>) =>
  must(api.POST('/api/crm/feedback/translation', { body }));
