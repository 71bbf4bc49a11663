// The signer port: who signs the records, operator acts and chain heads a host writes, with a public
// key each loop pins so that `loop check` verifies every signature. The host key
// (src/library/host.ts) is the usual one; `hostSignerOf(secret)` (src/core/records/host-records.ts)
// makes one over a 32-byte Ed25519 secret key.

/** The version of the signer port. */
export const SIGNER_PORT_VERSION = "v1";

/** An Ed25519 signer whose public key can be pinned; records are stored unsigned without one. */
export interface RecordSigner {
  /** The record with its `signature` field added. */
  sign<T extends object>(record: T): Promise<T>;
  /** The 32-byte Ed25519 public key the signatures verify against. */
  publicKey(): Promise<Uint8Array>;
}
