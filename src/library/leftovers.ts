// The environments a loop's runs left on this host when their driver died mid-run (killed before
// it could destroy them): found by the directory each run journaled and by the run's stable name,
// and removed — only while no live process drives the loop (its lease expired or released, or its
// holder a process of this host that is gone): a live driver removes its own at its next step
// boundary.
import { hostname, tmpdir } from "node:os";
import path from "node:path";
import {
  discardNamedEnvironmentDir,
  removeEnvironmentDir,
} from "../adapters/sandbox/environment-dir.js";
import type { LedgerStore } from "../core/ports/ledger-store.js";
import type { RunStartedBody } from "../runtime/records.js";
import { environmentNameOf } from "../runtime/run-executor.js";

const ENV_DIR_PREFIX = "warrant-env-";

/** What was done about the loop's leftover environments. */
export type LeftoverSweep =
  | { readonly swept: true; readonly left: number }
  | { readonly swept: false; readonly reason: "driven" };

/** Whether a lease holder (`host:pid:random`, as leaseHolder makes it) is a process here that is gone. */
function holderGone(holder: string): boolean {
  const m = /^(.*):(\d+):[0-9a-f]+$/.exec(holder);
  if (m === null || m[1] !== hostname()) return false;
  try {
    process.kill(Number(m[2]), 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/**
 * Remove the environments the runs of `query` left under `tempRoot` (default: the OS temp
 * directory); `left` counts those that could not be removed. Nothing is touched while another
 * holder's lease on the loop is live (checked against the wall clock: leases bind processes) and
 * that holder may still run.
 */
export async function discardLeftEnvironments(
  store: LedgerStore,
  query: string,
  tempRoot: string = tmpdir(),
  now: Date = new Date(),
): Promise<LeftoverSweep> {
  const lease = (await store.leases()).find((l) => l.query === query);
  if (lease !== undefined && lease.until.getTime() > now.getTime() && !holderGone(lease.holder))
    return { swept: false, reason: "driven" };
  const records = await store.listRecords(query);
  const started = records
    .filter((r) => r.kind === "runStarted")
    .map((r) => r.body as RunStartedBody);
  // Every proposal's run has a stable environment name, journaled yet or not (a driver killed
  // between making the environment and journaling its start left one all the same).
  const proposals = new Set([
    ...records.filter((r) => r.kind === "proposal").map((r) => r.ref),
    ...started.map((r) => r["proposal/ref"]),
  ]);
  let left = 0;
  for (const proposal of proposals) {
    const named = await discardNamedEnvironmentDir(
      tempRoot,
      environmentNameOf(query, proposal),
    ).catch(() => ({ confirmed: false }));
    if (!named.confirmed) left += 1;
  }
  for (const run of started) {
    // The journaled directory: only ever one this host made for an environment.
    const base = path.dirname(run["environment/dir"]);
    if (!path.basename(base).startsWith(ENV_DIR_PREFIX)) continue;
    const journaled = await removeEnvironmentDir({ base }).catch(() => ({ confirmed: false }));
    if (!journaled.confirmed) left += 1;
  }
  return { swept: true, left };
}
