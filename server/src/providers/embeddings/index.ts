/** The embedder chosen from configuration (see `embeddings.ts` for the interface). */
import type { Config } from '../../config.ts';
import type { Embedder } from './embeddings.ts';
import { createLocalEmbedder } from './local.ts';
import { createOpenAiEmbedder } from './openai.ts';

export * from './embeddings.ts';
export { createLocalEmbedder, createOpenAiEmbedder };

/** Choose the embedder from configuration: remote when `EMBEDDINGS_URL` is set, else the local one. */
export function createEmbedder(config: Pick<Config, 'embeddingsUrl' | 'embeddingsModel' | 'embeddingsKey'>): Embedder {
  if (config.embeddingsUrl)
    return createOpenAiEmbedder({
      baseUrl: config.embeddingsUrl,
      model: config.embeddingsModel,
      apiKey: config.embeddingsKey,
    });
  return createLocalEmbedder();
}
