// A record body as its contract (contracts/ledger-records.v1.json, through the generated types in
// ../contracts/types) types it, before the signer adds its `signature`.

/** The contract's type of a record body, read-only, without the `signature` signing adds. */
export type Unsigned<T> = Readonly<Omit<T, "signature">>;
