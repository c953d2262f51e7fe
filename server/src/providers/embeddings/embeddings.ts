/**
 * Text embedders of the shared semantic index (configuration `EMBEDDINGS_*`; issue 5).
 *
 * Two implementations behind one interface:
 *  - `openai`: an OpenAI-compatible `POST {EMBEDDINGS_URL}/embeddings` service through the vendor's SDK
 *    (`EMBEDDINGS_URL` is the API base, e.g. `https://api.openai.com/v1`);
 *  - `local`: the built-in embedder of the embedded default (no download, no network): hashed word
 *    unigrams, word bigrams and character trigrams into a fixed dimension, L2-normalised. It captures
 *    lexical and morphological overlap, not meaning; it is honest about that in its id.
 *
 * Every vector leaves `embed` L2-normalised, so cosine distance = 1 − dot product on every path.
 * The index records `id` and `dims` with each vector; a change of either re-indexes (knowledge module).
 */

export interface Embedder {
  /** Stable identity of the vector space, e.g. `local:hash-ngram-v1` or `openai:text-embedding-3-small`. */
  readonly id: string;
  /** `local` or `openai`. */
  readonly kind: 'local' | 'openai';
  /**
   * Dimension of the vectors. Known up front for the local embedder; for a remote service it is learned
   * from the first answer (call `probe()` first). @throws Error when not yet known.
   */
  dims(): number;
  /** Learn the dimension (one tiny request for a remote service). @throws EmbeddingsError. */
  probe(): Promise<number>;
  /**
   * Embed texts in order. @returns one L2-normalised vector (length `dims()`) per text.
   * @throws EmbeddingsError when the service fails or answers vectors of an unexpected shape.
   */
  embed(texts: string[]): Promise<number[][]>;
  /**
   * Cosine distance under which a vector-only hit counts as relevant to a question (used by the help
   * assistant to decide that nothing relevant was found). Calibrated per embedder.
   */
  readonly relevantDistance: number;
}

export class EmbeddingsError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/** L2-normalise in place; a zero vector stays zero. @returns the same array. */
export function normalize(v: number[]): number[] {
  let s = 0;
  for (const x of v) s += x * x;
  const n = Math.sqrt(s);
  if (n > 0) for (let i = 0; i < v.length; i++) v[i] /= n;
  return v;
}
