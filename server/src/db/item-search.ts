/**
 * The plan of the items list's `q` filter (CONTRACT "Lists": substring of the name, case-insensitive, taken
 * literally), without database access; db/items.ts `listItems` runs it (issue 11).
 *
 * Phase 1 reads a window of at most `SEARCH_WINDOW` rows of the list order after the cursor (the
 * (company_id, created_at desc, id desc) index) and keeps the names holding the term: a term in at least about one
 * row in five fills a page of 100 there, at any table size. Phase 1 also counts, over the window, how many names hold
 * each of the term's longest words (`searchWords`). Only when the window ends without a full page does phase 2 read
 * the pg_trgm GIN index on lower(name), for the rows after the window, probing only with the words that were rare
 * in the window (`trigramProbe`): a word every name holds (a company's "Inc", the bench's "lead") has a posting
 * list as long as the table, which GIN would walk from end to end, while the rare words' lists stay short.
 */

/** Rows of the list order phase 1 reads before the trigram index is asked (a page of 100 fills there at >= 20%). */
export const SEARCH_WINDOW = 500;

/** How many of the term's words phase 1 counts over its window (the longest ones). */
export const COUNTED_WORDS = 4;

/** A word held by at most this share of the window's names is rare enough to probe the trigram index with. */
export const RARE_WORD_SHARE = 0.01;

/** Shortest word pg_trgm extracts a trigram from inside a `%...%` pattern (an unpadded word needs 3 characters). */
const MIN_TRIGRAM_WORD = 3;

/** A word of the term as pg_trgm splits it: a run of letters and digits, here with its position among the words. */
export interface SearchWord {
  text: string;
  /** Index among all the term's words, so probes keep the term's order. */
  order: number;
}

/**
 * The words of `term` phase 1 counts: runs of letters and digits (pg_trgm's word characters) of at least 3
 * characters, distinct case-insensitively, the `COUNTED_WORDS` longest (earlier first among equals).
 * @returns at most `COUNTED_WORDS` words, in the term's order; empty when no word can yield a trigram.
 */
export function searchWords(term: string): SearchWord[] {
  const seen = new Set<string>();
  const words: SearchWord[] = [];
  let order = 0;
  for (const match of term.matchAll(/[\p{L}\p{N}]+/gu)) {
    const text = match[0];
    const key = text.toLowerCase();
    if ([...text].length >= MIN_TRIGRAM_WORD && !seen.has(key)) {
      seen.add(key);
      words.push({ text, order });
    }
    order++;
  }
  return words
    .map((w, i) => ({ w, i }))
    .sort((a, b) => [...b.w.text].length - [...a.w.text].length || a.i - b.i)
    .slice(0, COUNTED_WORDS)
    .map(({ w }) => w)
    .sort((a, b) => a.order - b.order);
}

/**
 * The LIKE pattern phase 2 probes the trigram index with: `%w1%w2%...` of the counted words held by at most
 * `RARE_WORD_SHARE` of the `windowRows` names phase 1 read (`counts[i]` for `words[i]`), in the term's order. Any
 * name holding the term holds these words in this order, so the probe finds every match (the caller checks the
 * whole term as well). Words are letters and digits only, so nothing needs escaping.
 * @returns the pattern, or null when no counted word is rare (then the whole term is the probe).
 */
export function trigramProbe(words: readonly SearchWord[], counts: readonly number[], windowRows: number): string | null {
  const rare = words.filter((_, i) => (counts[i] ?? Infinity) <= windowRows * RARE_WORD_SHARE);
  return rare.length ? `%${rare.map((w) => w.text).join("%")}%` : null;
}

/** `text` for a LIKE pattern that matches it literally: `\`, `%` and `_` escaped (LIKE's default escape is `\`). */
export function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
