// The changeset record of a loop's verified run, found from its facts: which run (the last verified
// one, or one named by its ref or a prefix), its execution, its body, and the roles that took part.
import type { Changeset } from "../core/contracts/types/ledger-records.v1.js";
import type { LedgerRecord, LedgerStore, OperatorAct } from "../core/ports/ledger-store.js";
import { readRecordBody } from "../core/records/record-body.js";
import { WarrantError } from "../core/result.js";

export interface ChangeOptions {
  /** A run of the loop (its proposal ref, or a unique prefix of at least 8 characters). */
  readonly run?: string;
}

export interface Found {
  readonly query: string;
  readonly run: string;
  readonly executionRef: string;
  readonly changeset: LedgerRecord;
  /** The changeset's body, as its schema (contracts/ledger-records.v1.json) types it. */
  readonly body: Changeset;
  readonly records: readonly LedgerRecord[];
  readonly roles: readonly { readonly role: string; readonly agent: string }[];
  /** The loop's operator acts (who approved the run's mutations). */
  readonly acts: readonly OperatorAct[];
}

/** The prefix of a code (`diff/…` for `warrant diff`, `apply/…` for `warrant apply`). */
export type Area = "diff" | "apply";

export async function findChange(
  store: LedgerStore,
  query: string,
  opts: ChangeOptions,
  area: Area,
): Promise<Found> {
  const facts = (await store.readFacts(query)).map((s) => s.fact.step);
  if (facts.length === 0)
    throw new WarrantError("loop/not-opened", `no loop ${query} in the store`);
  const runs = [
    ...new Set(facts.flatMap((s) => (s.kind === "run-admitted" ? [s["proposal/ref"]] : []))),
  ];
  const concluded = facts.flatMap((s) => (s.kind === "concluded" ? [s] : []));
  let run: string;
  if (opts.run !== undefined) {
    const wanted = opts.run;
    const matches = runs.filter(
      (r) => r === wanted || (wanted.length >= 8 && r.startsWith(wanted)),
    );
    if (matches.length !== 1)
      throw new WarrantError(
        `${area}/run-unknown`,
        matches.length === 0
          ? `${wanted} names no run of ${query}`
          : `${wanted} names ${matches.length} runs of ${query}: give more of the ref`,
      );
    run = matches[0] as string;
    const end = concluded.find((c) => c["proposal/ref"] === run);
    if (end?.outcome !== "verified")
      throw new WarrantError(
        `${area}/not-verified`,
        `run ${run} of ${query} ${end === undefined ? "has not concluded" : `concluded ${end.outcome}`}, not verified: there is no verified change to take`,
      );
  } else {
    const last = concluded.filter((c) => c.outcome === "verified").at(-1);
    if (last === undefined)
      throw new WarrantError(
        `${area}/not-verified`,
        `${query} has no verified run: there is no verified change to take`,
      );
    run = last["proposal/ref"];
  }
  const end = concluded.find((c) => c["proposal/ref"] === run);
  const executionRef = end?.["execution/ref"] as string;
  const [records, acts] = await Promise.all([
    store.listRecords(query),
    store.readOperatorActs(query),
  ]);
  const changeset = records.find(
    (r) =>
      r.kind === "changeset" &&
      (r.body as { "execution/ref"?: unknown })["execution/ref"] === executionRef,
  );
  if (changeset === undefined)
    throw new WarrantError(
      `${area}/no-changeset`,
      `run ${run} was verified before changes were kept in the ledger (no changeset record names ${executionRef}): run the loop again to get a change to take`,
    );
  const body = readRecordBody("changeset", changeset.body);
  if (!body.ok)
    throw new WarrantError(
      "records/body-invalid",
      `the changeset ${changeset.ref}: ${body.errors.map((e) => `${e.path} ${e.message}`).join("; ")}`,
    );
  const roles: { role: string; agent: string }[] = [];
  for (const s of facts) {
    if (s.kind !== "passage-charged") continue;
    if (!roles.some((r) => r.role === s.role && r.agent === s["agent/id"]))
      roles.push({ role: s.role, agent: s["agent/id"] });
  }
  return {
    query,
    run,
    executionRef,
    changeset,
    body: body.value,
    records,
    roles,
    acts,
  };
}

export function incomplete(area: Area, found: Found): WarrantError {
  return new WarrantError(
    `${area}/changeset-incomplete`,
    `the change of run ${found.run} was kept without its contents (too large, or not only regular files): ${found.changeset.ref} lists it, it cannot be ${area === "diff" ? "shown" : "applied"}`,
  );
}
