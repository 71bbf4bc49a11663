// The string and number formats the contract schemas use, as one object: the factory registers
// them on every strict Ajv instance, and the precompiled validators import them, so both check a
// format the same way.
import { fullFormats } from "ajv-formats/dist/formats.js";

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

export const CONTRACT_FORMATS: Readonly<Record<string, ContractFormat>> = {
  "date-time": fullFormats["date-time"] as ContractFormat,
  date: fullFormats.date as ContractFormat,
  time: fullFormats.time as ContractFormat,
  uri: fullFormats.uri as ContractFormat,
  email: fullFormats.email as ContractFormat,
  uuid: fullFormats.uuid as ContractFormat,
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
