/**
 * Synthetic corpora of bench/rag.ts (issue 31), each document made from its number alone (the same text on every
 * call, so a 1M-chunk corpus is never all in memory):
 *  - `zipf` (the original one): every word of every section drawn Zipf-distributed from one 6,000-word vocabulary,
 *    no topics; a query's exact top 6 holds its source chunk and five chunks at noise-level distances;
 *  - `topics`: like real projects, each document is about one of `topics` subjects; a section's words are drawn
 *    60 % from its topic's own 200-word vocabulary (Zipf within the topic) and 40 % from the shared 6,000 words,
 *    so the chunks of one topic are nearer to each other than to the rest.
 */

/** Deterministic pseudo-random numbers in [0, 1) (mulberry32). */
export function rng(seed: number): () => number {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SYL = 'ka lo mi ne ru ta vo zi pe sa do gu bri fen hol jak lin mor nus pra qui ster tor vel'.split(' ');

/** A made-up word from seed `i` (2–4 syllables and a digit). */
const word = (i: number) => {
  const r = rng(i + 1);
  const n = 2 + Math.floor(r() * 3);
  return Array.from({ length: n }, () => SYL[Math.floor(r() * SYL.length)]).join('') + (i % 7);
};

const VOCAB = Array.from({ length: 6000 }, (_, i) => word(i));
const TOPIC_WORDS = 200;

/** Index in [0, n) drawn Zipf-like (log-uniform) with `rand`. */
const zipfIx = (rand: () => number, n: number) => Math.min(n - 1, Math.floor(Math.exp(rand() * Math.log(n))) - 1);

export type CorpusKind = 'zipf' | 'topics';

export interface Doc {
  /** 0-based project number. */
  project: number;
  id: string;
  title: string;
  /** Markdown: `## heading` then the section's text, per section. */
  text: string;
  /** The sections' texts (queries are taken from them). */
  sections: string[];
  /** The document's topic (`topics` corpus; -1 for `zipf`). */
  topic: number;
}

/**
 * A corpus: `at(d)` makes document `d` (0 ≤ d < docs) of `sections` sections, spread over `projects` projects.
 * @param topics number of subjects of the `topics` corpus (ignored by `zipf`).
 */
export function corpus(kind: CorpusKind, opts: { docs: number; projects: number; sections: number; topics: number }) {
  const topicVocab = new Map<number, string[]>();
  const vocabOf = (t: number) => {
    let v = topicVocab.get(t);
    if (!v) {
      // Words of their own per topic (seeded apart from the shared vocabulary's seeds).
      v = Array.from({ length: TOPIC_WORDS }, (_, i) => word(1_000_000 + t * TOPIC_WORDS + i));
      topicVocab.set(t, v);
    }
    return v;
  };
  const at = (d: number): Doc => {
    const rand = rng(1_000_003 * (d + 1));
    const topic = kind === 'topics' ? Math.floor(rand() * opts.topics) : -1;
    const tv = topic >= 0 ? vocabOf(topic) : undefined;
    const pick = () => (tv && rand() < 0.6 ? tv[zipfIx(rand, tv.length)] : VOCAB[zipfIx(rand, VOCAB.length)]);
    const sentence = (n: number) => Array.from({ length: n }, pick).join(' ');
    const sections = Array.from({ length: opts.sections }, () => sentence(45 + Math.floor(rand() * 30)));
    const title = `Doc ${d} ${sentence(2)}`;
    const text = sections.map((s, i) => `## ${sentence(3)} ${i}\n\n${s}.`).join('\n\n');
    return { project: d % opts.projects, id: `doc-${d}.md`, title, text, sections, topic };
  };
  return { length: opts.docs, at };
}
