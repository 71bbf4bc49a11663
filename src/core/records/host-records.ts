// The records by which a host vouches for a loop: the host key pinned at its opening, a signed
// rotation to another key, signed chain heads (sequence, hash, acts counted, time) that anchor the
// facts and operator acts against truncation and re-chained edits, and the signature of each
// operator act. Each is content-addressed (its ref kept beside the body) and signed like every
// record of the loop.
import type * as Wire from "../contracts/types/ledger-records.v1.js";
import type { LedgerRecord, OperatorAct } from "../ports/ledger-store.js";
import type { RecordSigner } from "../ports/signer.js";
import { base64url, contentRef } from "./canonical.js";
import { operatorActRef } from "./operator-act.js";
import { OUTSIDE_REF_FIELD, RECORD_KIND_TABLE } from "./record-kinds.js";
import { publicKeyOf, signRecord } from "./signature.js";
import type { Unsigned } from "./unsigned.js";

/**
 * The host key pinned at a loop's opening: `key/public` is the unpadded base64url of the 32-byte
 * Ed25519 public key every record of the loop is signed by.
 */
export type HostKeyBody = Unsigned<Wire.HostKey>;

/** A rotation to another key; `at/sequence` is the loop's last fact when the key changed. */
export type KeyRotationBody = Unsigned<Wire.KeyRotation>;

/**
 * Why a head was signed: the loop stopped, a drive blocked, a run concluded, an operator acted
 * (an approval, denial or answer, or a renewal), or the loop was exported as a bundle.
 */
export type HeadReason = Wire.Head["reason"];

/**
 * A signed chain head: `hash` is the chain hash stored with fact `sequence`; `acts` the operator
 * acts of the loop that count, as many as the signer read (absent in heads signed before acts were
 * counted: none are covered).
 */
export type HeadBody = Unsigned<Wire.Head>;

/** The host's signature of one operator act: the act is named by its ref, which binds every field. */
export type ActSignatureBody = Unsigned<Wire.ActSignature>;

type OutsideKind = "hostKey" | "keyRotation" | "head" | "actSignature";

/** A signer over a 32-byte Ed25519 secret key, or the signer itself. */
export type SigningKey = Uint8Array | RecordSigner;

export function hostSignerOf(key: SigningKey): RecordSigner {
  if (!(key instanceof Uint8Array)) return key;
  const secret = new Uint8Array(key);
  return { sign: (record) => signRecord(record, secret), publicKey: () => publicKeyOf(secret) };
}

/** A record of a kind whose ref is kept beside its body, signed by `key`. */
async function signedRecord(
  kind: OutsideKind,
  query: string,
  body: object,
  key: SigningKey,
): Promise<LedgerRecord> {
  const ref = contentRef(
    RECORD_KIND_TABLE[kind].prefix,
    body as Record<string, unknown>,
    OUTSIDE_REF_FIELD,
  );
  return { ref, kind, query, body: await hostSignerOf(key).sign(body) };
}

export async function hostKeyRecord(
  query: string,
  key: SigningKey,
  createdAt: string,
): Promise<LedgerRecord> {
  const body: HostKeyBody = {
    "query/id": query,
    "key/public": base64url(await hostSignerOf(key).publicKey()),
    "created-at": createdAt,
  };
  return signedRecord("hostKey", query, body, key);
}

/** A rotation to `nextPublic`, signed by the key it replaces (`previousSecret`). */
export async function keyRotationRecord(
  query: string,
  previousSecret: Uint8Array,
  nextPublic: Uint8Array,
  atSequence: number,
  rotatedAt: string,
): Promise<LedgerRecord> {
  const body: KeyRotationBody = {
    "query/id": query,
    "key/previous": base64url(await publicKeyOf(previousSecret)),
    "key/next": base64url(nextPublic),
    "at/sequence": atSequence,
    "rotated-at": rotatedAt,
  };
  return signedRecord("keyRotation", query, body, previousSecret);
}

export async function headRecord(
  query: string,
  head: { readonly sequence: number; readonly hash: string; readonly acts?: number },
  reason: HeadReason,
  key: SigningKey,
  signedAt: string,
): Promise<LedgerRecord> {
  const body: HeadBody = {
    "query/id": query,
    sequence: head.sequence,
    hash: head.hash,
    ...(head.acts === undefined ? {} : { acts: head.acts }),
    "signed-at": signedAt,
    reason,
  };
  return signedRecord("head", query, body, key);
}

/** The signature of an operator act (the same act signs to the same record: Ed25519 is deterministic). */
export async function actSignatureRecord(act: OperatorAct, key: SigningKey): Promise<LedgerRecord> {
  const body: ActSignatureBody = { "query/id": act.query, "act/ref": operatorActRef(act) };
  return signedRecord("actSignature", act.query, body, key);
}
