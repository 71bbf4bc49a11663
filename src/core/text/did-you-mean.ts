// Suggestions for a mistyped name: the known names nearest to it by edit distance, for the
// "did you mean …?" of an error message. Pure; letter case is ignored.

/** Levenshtein distance (insertions, deletions, substitutions), stopping early past `max`. */
export function editDistance(a: string, b: string, max = Number.POSITIVE_INFINITY): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const value = Math.min(
        (previous[j] ?? 0) + 1,
        (row[j - 1] ?? 0) + 1,
        (previous[j - 1] ?? 0) + cost,
      );
      row.push(value);
      if (value < best) best = value;
    }
    if (best > max) return max + 1;
    previous = row;
  }
  return previous[b.length] ?? 0;
}

/**
 * The known names close enough to `name` to be what was meant, nearest first (ties in the order
 * given): within a third of the name's length in edits (at least one, at most three).
 */
export function closestNames(name: string, known: Iterable<string>): string[] {
  const max = Math.min(3, Math.max(1, Math.floor(name.length / 3)));
  const scored: { readonly name: string; readonly distance: number; readonly order: number }[] = [];
  let order = 0;
  for (const k of known) {
    const distance = editDistance(name.toLowerCase(), k.toLowerCase(), max);
    if (k !== name && distance <= max) scored.push({ name: k, distance, order });
    order++;
  }
  return scored.sort((a, b) => a.distance - b.distance || a.order - b.order).map((s) => s.name);
}

/** ` (did you mean "x"?)`, or "" when nothing is close. */
export function didYouMean(name: string, known: Iterable<string>): string {
  const [first] = closestNames(name, known);
  return first === undefined ? "" : ` (did you mean ${JSON.stringify(first)}?)`;
}

/**
 * ` (did you mean "x"?)` when a known name is close, else the known names (` (known: a, b)`, at
 * most `max` of them), or "" when there are none.
 */
export function suggestName(name: string, known: readonly string[], max = 8): string {
  const close = didYouMean(name, known);
  if (close !== "" || known.length === 0) return close;
  const shown = known.slice(0, max).join(", ");
  return ` (known: ${shown}${known.length > max ? `, … ${known.length - max} more` : ""})`;
}
