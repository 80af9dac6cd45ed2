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
 * word's length edits away (at least 1, or 2 from four letters on, so that a swap of two letters
 * counts; at most 3), or the word with two neighbouring letters swapped, or one that starts with
 * it. Ties go to the first candidate.
 */
export function closest(word: string, candidates: Iterable<string>): string | null {
  const limit = Math.min(3, Math.max(word.length >= 4 ? 2 : 1, Math.floor(word.length / 3)));
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
  for (const candidate of candidates) if (isSwap(word, candidate)) return candidate;
  for (const candidate of candidates) if (word.length >= 2 && candidate.startsWith(word)) return candidate;
  return null;
}

/** Whether `b` is `a` with two neighbouring letters swapped ("zhs" for "zsh"). */
function isSwap(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  const diff: number[] = [];
  for (let i = 0; i < a.length && diff.length <= 2; i++) if (a[i] !== b[i]) diff.push(i);
  return diff.length === 2 && diff[1] === diff[0]! + 1 && a[diff[0]!] === b[diff[1]!] && a[diff[1]!] === b[diff[0]!];
}

/** ` (did you mean "x"?)`, or '' when nothing is close. */
export function didYouMean(word: string, candidates: Iterable<string>, quote = (s: string): string => `"${s}"`): string {
  const match = closest(word, candidates);
  return match === null ? '' : ` (did you mean ${quote(match)}?)`;
}
