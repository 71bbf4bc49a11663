// The lease port: which process drives a loop. A lease is held until a time, extended by its holder,
// and carries a fencing token that every write made under it names, so that a driver that lost its
// lease cannot write any more (src/testing/contracts/leases.ts, exported as `leaseContract` by
// warrant/testing). Every LedgerStore keeps leases.

/** The version of the lease port. */
export const LEASES_PORT_VERSION = "v1";

/** A write made under a loop's lease: its records are refused unless `token` is still current. */
export interface Fence {
  readonly query: string;
  readonly token: number;
}

/** A lease just granted or extended. */
export interface LeaseGrant {
  /**
   * The lease's fencing token: per loop, greater than every token granted before for that loop
   * (also across releases and restarts), and unchanged while the same holder extends its lease.
   */
  readonly token: number;
}

/** A loop's lease as the store holds it; an expired one stays until another holder takes it. */
export interface LeaseInfo {
  readonly query: string;
  readonly holder: string;
  readonly token: number;
  readonly until: Date;
}

export interface Leases {
  /**
   * Take or extend the lease to drive a loop: its grant when `holder` now holds it until now+ttl
   * (free, expired, or already its own); undefined while another holder's lease is still live.
   */
  acquireLease(
    query: string,
    holder: string,
    ttlMs: number,
    now: Date,
  ): Promise<LeaseGrant | undefined>;
  /**
   * Extend a lease to now+ttl only while the loop's lease row is still `holder`'s under `token`
   * (live, or expired and not taken): false once it was taken or released. A renewal never takes
   * a loop, so a driver that lost its lease cannot get it back by renewing.
   */
  renewLease(
    query: string,
    holder: string,
    token: number,
    ttlMs: number,
    now: Date,
  ): Promise<boolean>;
  /** Removes the lease only while `holder` holds it; its token is never granted again. */
  releaseLease(query: string, holder: string): Promise<void>;
  /** Every lease held, live or expired, ordered by query. */
  leases(): Promise<readonly LeaseInfo[]>;
}
