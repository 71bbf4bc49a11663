// Content-addressed records (docs/spec/contracts.md): a record carries its own ref, the digest of its JCS bytes
// without that ref field and without any `signature`.
import { contentRef } from "./canonical.js";

/** Any JSON object record (interfaces included, which lack an index signature). */
export type WireRecord = object;

const fields = (record: WireRecord) => record as Readonly<Record<string, unknown>>;

/**
 * The record with `refField` set to its content ref, placed first for readability: `T` is the
 * record's type, `fields` every field of it but the ref.
 */
export function withContentRef<T extends WireRecord, F extends keyof T & string>(
  prefix: string,
  refField: F,
  record: Omit<T, F>,
): T {
  const { [refField]: _old, ...rest } = fields(record);
  const out: Readonly<Record<string, unknown>> = {
    [refField]: contentRef(prefix, rest, refField),
    ...rest,
  };
  return out as T;
}

/** True when the record's `refField` is exactly the content ref its other fields give. */
export function hasValidContentRef(prefix: string, refField: string, record: WireRecord): boolean {
  const ref = fields(record)[refField];
  return typeof ref === "string" && ref === contentRef(prefix, fields(record), refField);
}
