// Leases with fencing tokens and the worker registry in SQLite. Every call is one synchronous
// statement or one IMMEDIATE transaction, so a lease decision and its write hold the write lock
// together; a fenced write checks its token inside its own transaction (sqlite-ledger-store.ts).
import type Database from "better-sqlite3";
import type { LeaseGrant, LeaseInfo } from "../../core/ports/leases.js";
import type { WorkerInfo, WorkerRegistration } from "../../core/ports/ledger-store.js";
import { compareBytes } from "./batch.js";
import { decideLease, type HeldLease, heldBy, leaseLost } from "./lease-rules.js";

interface LeaseRow {
  readonly query: string;
  readonly holder: string;
  readonly token: number;
  readonly expires_at: number;
}

interface WorkerRow {
  readonly id: string;
  readonly host: string;
  readonly pid: number;
  readonly started_at: number;
  readonly heartbeat_at: number;
}

export class SqliteLeases {
  readonly #stmt;
  readonly #acquireTx: Database.Transaction<
    (query: string, holder: string, ttlMs: number, now: number) => LeaseGrant | undefined
  >;

  constructor(db: Database.Database) {
    this.#stmt = {
      lease: db.prepare(
        "SELECT query, holder, token, expires_at FROM warrant_leases WHERE query = ?",
      ),
      lastToken: db.prepare("SELECT last_token FROM warrant_lease_tokens WHERE query = ?"),
      extend: db.prepare("UPDATE warrant_leases SET expires_at = ? WHERE query = ?"),
      spend: db.prepare(
        "INSERT INTO warrant_lease_tokens (query, last_token) VALUES (?, ?) " +
          "ON CONFLICT (query) DO UPDATE SET last_token = excluded.last_token",
      ),
      take: db.prepare(
        "INSERT INTO warrant_leases (query, holder, token, expires_at) VALUES (?, ?, ?, ?) " +
          "ON CONFLICT (query) DO UPDATE SET holder = excluded.holder, token = excluded.token, " +
          "expires_at = excluded.expires_at",
      ),
      renew: db.prepare(
        "UPDATE warrant_leases SET expires_at = ? WHERE query = ? AND holder = ? AND token = ?",
      ),
      release: db.prepare("DELETE FROM warrant_leases WHERE query = ? AND holder = ?"),
      list: db.prepare(
        "SELECT query, holder, token, expires_at FROM warrant_leases ORDER BY query",
      ),
      register: db.prepare(
        "INSERT INTO warrant_workers (id, host, pid, started_at, heartbeat_at) VALUES (?, ?, ?, ?, ?) " +
          "ON CONFLICT (id) DO UPDATE SET host = excluded.host, pid = excluded.pid, " +
          "started_at = excluded.started_at, heartbeat_at = excluded.heartbeat_at",
      ),
      heartbeat: db.prepare("UPDATE warrant_workers SET heartbeat_at = ? WHERE id = ?"),
      deregister: db.prepare("DELETE FROM warrant_workers WHERE id = ?"),
      workers: db.prepare(
        "SELECT id, host, pid, started_at, heartbeat_at FROM warrant_workers ORDER BY id",
      ),
      held: db.prepare("SELECT holder, query FROM warrant_leases ORDER BY query"),
      prune: db.prepare("DELETE FROM warrant_workers WHERE heartbeat_at < ? RETURNING id"),
    };
    this.#acquireTx = db.transaction((query, holder, ttlMs, now) => {
      const decision = decideLease(this.current(query), this.#lastToken(query), holder, now);
      switch (decision.kind) {
        case "refused":
          return undefined;
        case "extend":
          this.#stmt.extend.run(now + ttlMs, query);
          return { token: decision.token };
        case "take":
          this.#stmt.spend.run(query, decision.token);
          this.#stmt.take.run(query, holder, decision.token, now + ttlMs);
          return { token: decision.token };
        default:
          return decision satisfies never;
      }
    });
  }

  /** The loop's lease row, if any (inside the caller's transaction). */
  current(query: string): HeldLease | undefined {
    const row = this.#stmt.lease.get(query) as LeaseRow | undefined;
    return row === undefined
      ? undefined
      : { holder: row.holder, token: row.token, expiresAt: row.expires_at };
  }

  /** Throws `store/lease-lost` unless the loop's lease is held under `token`. */
  checkFence(query: string, token: number): void {
    const lease = this.current(query);
    if (lease?.token !== token) throw leaseLost(query, token, lease);
  }

  acquire(query: string, holder: string, ttlMs: number, now: Date): LeaseGrant | undefined {
    return this.#acquireTx.immediate(query, holder, ttlMs, now.getTime());
  }

  renew(query: string, holder: string, token: number, ttlMs: number, now: Date): boolean {
    return this.#stmt.renew.run(now.getTime() + ttlMs, query, holder, token).changes === 1;
  }

  release(query: string, holder: string): void {
    this.#stmt.release.run(query, holder);
  }

  list(): readonly LeaseInfo[] {
    return (this.#stmt.list.all() as LeaseRow[]).map((r) => ({
      query: r.query,
      holder: r.holder,
      token: r.token,
      until: new Date(r.expires_at),
    }));
  }

  register(w: WorkerRegistration): void {
    const started = w.started.getTime();
    this.#stmt.register.run(w.id, w.host, w.pid, started, started);
  }

  heartbeat(id: string, now: Date): boolean {
    return this.#stmt.heartbeat.run(now.getTime(), id).changes === 1;
  }

  deregister(id: string): void {
    this.#stmt.deregister.run(id);
  }

  workers(): readonly WorkerInfo[] {
    const held = this.#stmt.held.all() as { holder: string; query: string }[];
    return (this.#stmt.workers.all() as WorkerRow[]).map((r) => ({
      id: r.id,
      host: r.host,
      pid: r.pid,
      started: new Date(r.started_at),
      lastHeartbeat: new Date(r.heartbeat_at),
      loops: held.filter((l) => heldBy(l.holder, r.id)).map((l) => l.query),
    }));
  }

  prune(before: Date): readonly string[] {
    return (this.#stmt.prune.all(before.getTime()) as { id: string }[])
      .map((r) => r.id)
      .sort(compareBytes);
  }

  #lastToken(query: string): number {
    return (this.#stmt.lastToken.get(query) as { last_token: number } | undefined)?.last_token ?? 0;
  }
}
