/** "Did you mean": the nearest of the known words to a mistyped one, when it is near enough to be the one meant. */

/** Edits (insert, delete, replace, swap two neighbours) between two words. */
export function distance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number): number => rows[i]?.[j] ?? Number.POSITIVE_INFINITY;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, at(i - 2, j - 2) + 1);
      const row = rows[i];
      if (row) row[j] = best;
    }
  }
  return at(a.length, b.length);
}

/** The known word nearest to `word`, if within a third of its length (at least one edit); else undefined. */
export function nearest(word: string, known: readonly string[]): string | undefined {
  const limit = Math.max(1, Math.floor(word.length / 3));
  let best: { word: string; distance: number } | undefined;
  for (const candidate of known) {
    const d = distance(word.toLowerCase(), candidate.toLowerCase());
    if (d <= limit && (best === undefined || d < best.distance)) best = { word: candidate, distance: d };
  }
  return best?.word;
}

/** ` (did you mean "x"?)`, or nothing. */
export const didYouMean = (word: string, known: readonly string[]): string => {
  const guess = nearest(word, known);
  return guess === undefined ? '' : ` (did you mean "${guess}"?)`;
};
