// The string and number formats the contract schemas use, as one object: the factory registers
// them on every strict Ajv instance, and the precompiled validators import them, so both check a
// format the same way. The ajv-formats ones are loaded on first use (a validator that checks no
// date or URI never loads them).
import { createRequire } from "node:module";
import type { fullFormats as FullFormats } from "ajv-formats/dist/formats.js";

const U64_MAX = 18446744073709551615n;
const I64_MIN = -9223372036854775808n;
const I64_MAX = 9223372036854775807n;

function integerOf(n: number): bigint | undefined {
  return Number.isInteger(n) ? BigInt(n) : undefined;
}

/** A format as Ajv takes it: a pattern, a predicate, or a typed definition. */
export type ContractFormat =
  | RegExp
  | ((s: string) => boolean)
  | { readonly type?: "string" | "number"; readonly validate: unknown; readonly compare?: unknown };

let full: typeof FullFormats | undefined;

function fromAjvFormats(name: keyof typeof FullFormats): ContractFormat {
  if (full === undefined) {
    const require = createRequire(import.meta.url);
    full = (require("ajv-formats/dist/formats.js") as { fullFormats: typeof FullFormats })
      .fullFormats;
  }
  return full[name] as ContractFormat;
}

export const CONTRACT_FORMATS: Readonly<Record<string, ContractFormat>> = {
  get "date-time"() {
    return fromAjvFormats("date-time");
  },
  get date() {
    return fromAjvFormats("date");
  },
  get time() {
    return fromAjvFormats("time");
  },
  get uri() {
    return fromAjvFormats("uri");
  },
  get email() {
    return fromAjvFormats("email");
  },
  get uuid() {
    return fromAjvFormats("uuid");
  },
  uint64: {
    type: "number",
    validate: (n: number) => {
      const b = integerOf(n);
      return b !== undefined && b >= 0n && b <= U64_MAX;
    },
  },
  int64: {
    type: "number",
    validate: (n: number) => {
      const b = integerOf(n);
      return b !== undefined && b >= I64_MIN && b <= I64_MAX;
    },
  },
  double: { type: "number", validate: (n: number) => Number.isFinite(n) },
};
