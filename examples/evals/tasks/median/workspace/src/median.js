// The median of a non-empty list of numbers.
export function median(values) {
  const sorted = [...values].sort();
  return sorted[Math.floor(sorted.length / 2)];
}
