// Compares a text with the one expected and says where they first differ.
export function expectText(actual, expected) {
  if (actual === expected) return;
  let at = 0;
  while (at < actual.length && actual[at] === expected[at]) at += 1;
  throw new Error(
    `expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)} (first difference at ${at})`,
  );
}
