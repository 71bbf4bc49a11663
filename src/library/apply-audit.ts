// The audit `warrant apply` runs before it takes a loop's change: the loop passes the check
// `warrant loop check --store` runs, and the changeset record apply read is one that audit vouched
// for (its content reproduces its ref and it is signed by a key of the loop), so a row edited
// between the audit and the read is caught too.
import type { LedgerStore } from "../core/ports/ledger-store.js";
import { contentRef } from "../core/records/canonical.js";
import { OUTSIDE_REF_FIELD, RECORD_KIND_TABLE } from "../core/records/record-kinds.js";
import { verifyRecordSignature } from "../core/records/signature.js";
import { WarrantError } from "../core/result.js";
import { terminalLine } from "../core/text/terminal-text.js";
import { auditStoredLoop } from "./audit.js";
import type { Found } from "./change-record.js";

function failed(query: string, what: string, path?: string): WarrantError {
  return new WarrantError(
    "apply/audit-failed",
    `${query} fails its audit (as \`warrant loop check --store\` runs it), so its change is not taken: ${what}`,
    path === undefined ? undefined : { path },
  );
}

/** Refused with `apply/audit-failed`, naming the first problem (code, path, message). */
export async function auditBeforeApply(store: LedgerStore, found: Found): Promise<void> {
  const audit = await auditStoredLoop(store, found.query);
  if (!audit.ok) {
    const first = audit.errors[0];
    const more = audit.errors.length > 1 ? ` (and ${audit.errors.length - 1} more)` : "";
    if (first === undefined) throw failed(found.query, "no problem named");
    throw failed(
      found.query,
      `${first.code} at ${first.path === "" ? "/" : first.path}: ${terminalLine(first.message)}${more}`,
      first.path,
    );
  }
  const { ref, body } = found.changeset;
  const fields = body as Readonly<Record<string, unknown>>;
  const key = (fields.signature as { readonly "key/public"?: unknown } | undefined)?.["key/public"];
  const vouched =
    !Object.hasOwn(fields, OUTSIDE_REF_FIELD) &&
    contentRef(RECORD_KIND_TABLE.changeset.prefix, fields, OUTSIDE_REF_FIELD) === ref &&
    typeof key === "string" &&
    audit.value.keys.includes(key) &&
    (await verifyRecordSignature(fields));
  if (!vouched)
    throw failed(
      found.query,
      `the changeset ${ref} read for the apply is not the record the audit vouched for (its content does not reproduce its ref, or it is not signed by a key of the loop)`,
    );
}
