// "Did you mean": the closest known word to a mistyped command, subcommand or flag, by
// Levenshtein distance (insertions, deletions and substitutions each cost 1).

/** Edit distance between `a` and `b`, in O(|a|·|b|) time and O(|b|) memory. */
export function levenshtein(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * The candidate closest to `word`, if it is close enough to be a typo: at most a third of the
 * word's length (at least 1, at most 3) edits away, or one that starts with it. Ties go to the
 * first candidate.
 */
export function closest(word: string, candidates: Iterable<string>): string | null {
  const limit = Math.min(3, Math.max(1, Math.floor(word.length / 3)));
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const distance = levenshtein(word, candidate);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  if (best !== null && bestDistance <= limit) return best;
  for (const candidate of candidates) if (word.length >= 2 && candidate.startsWith(word)) return candidate;
  return null;
}

/** ` (did you mean "x"?)`, or '' when nothing is close. */
export function didYouMean(word: string, candidates: Iterable<string>, quote = (s: string): string => `"${s}"`): string {
  const match = closest(word, candidates);
  return match === null ? '' : ` (did you mean ${quote(match)}?)`;
}
