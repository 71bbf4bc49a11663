// x limited to [low, high].
export function clamp(x, low, high) {
  if (x < low) return high;
  if (x > high) return high;
  return x;
}
