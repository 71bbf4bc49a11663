// The schemas of the ledger's record bodies (contracts/ledger-records.v1.json), one validator per
// record kind, as the generator of the precompiled validators (../contracts/standalone.ts) takes
// them: each export refers to its kind's definition, with the payload schemas it names beside it.
import ledgerRecords from "../../../contracts/ledger-records.v1.json" with { type: "json" };
import { PAYLOAD_SCHEMAS } from "../turn/payload-schemas.js";

export const LEDGER_RECORDS_SCHEMA: object = ledgerRecords;

/** The record kinds whose bodies have a schema, in the order of the contract. */
export const DESCRIBED_KINDS = [
  "proposal",
  "review",
  "execution",
  "transcript",
  "binding",
  "passageEnd",
  "runStarted",
  "stepStarted",
  "runReport",
  "hostKey",
  "keyRotation",
  "head",
  "actSignature",
  "driveTrace",
  "memoryWrite",
  "changeset",
] as const;

export type DescribedKind = (typeof DESCRIBED_KINDS)[number];

/** Export name → a schema (with an `$id` of its own) for the body of that kind. */
export function recordBodyExports(): Readonly<Record<DescribedKind, object>> {
  return Object.fromEntries(
    DESCRIBED_KINDS.map((kind) => [
      kind,
      {
        $id: `urn:warrant:ledger-record-body:${kind}`,
        $ref: `${ledgerRecords.$id}#/$defs/${kind}`,
      },
    ]),
  ) as Record<DescribedKind, object>;
}

/** What the record validators are compiled beside: the records' contract and the payloads it names. */
export function recordSupportSchemas(): readonly { readonly schema: object }[] {
  return [
    { schema: ledgerRecords },
    ...Object.values(PAYLOAD_SCHEMAS).map((schema) => ({ schema })),
  ];
}
