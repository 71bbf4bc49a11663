// Generators shared by the canonical JSON tests: strings JSON can carry and object keys that stress
// the key order.
import fc from "fast-check";

/** No lone surrogate (what JSON text can carry as it is). */
export const wellFormed = (s: string): boolean =>
  (s as unknown as { isWellFormed(): boolean }).isWellFormed();

/** Keys that stress the ordering: integer-like, prefixes, non-ASCII, astral, `__proto__`, NUL. */
export const trickyKey = fc.oneof(
  fc.string(),
  fc.string({ unit: "grapheme" }),
  fc.constantFrom("", "0", "1", "9", "10", "01", "-1", "4294967295", "__proto__", "a", "A", "é"),
  fc.constantFrom("\u{1F600}", "\uFB33", "\u00e9", "\u0080", "\u07ff", "\u0800", "\uffff"),
  fc.constantFrom("aa", "a\u0000", "toString", "toJSON"),
  fc.nat().map(String),
);
