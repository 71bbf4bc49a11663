// Checking a loop from outside (docs/spec/cli.md `warrant loop check`): a document (schema, contiguity, every
// fact legal in order, projection equal to the fold) or a stored loop (also its hash chain and the
// records its facts introduce). The first bad fact is named by its path `/facts/N`.
import { contractValidators } from "../contracts/ajv.js";
import { contractSources } from "../contracts/contract-sources.js";
import { validateLinear } from "../contracts/linear-validation.js";
import type { LedgerRecord, StoredFact } from "../ports/ledger-store.js";
import { canonicalJson } from "../records/canonical.js";
import { hasValidContentRef } from "../records/content-ref.js";
import { EXECUTION_PREFIX, EXECUTION_REF_FIELD } from "../records/execution.js";
import { PROPOSAL_PREFIX, PROPOSAL_REF_FIELD } from "../records/proposal.js";
import { readRecordBody } from "../records/record-body.js";
import { fail, ok, type Problem, pointer, type Result } from "../result.js";
import { chainHash, GENESIS_HASH } from "./chain.js";
import { commandOf } from "./command-of.js";
import { decide } from "./decide.js";
import { project, spentToWire, stopToWire } from "./project.js";
import { evolve, initialState, type LoopState, stateNameAt } from "./state.js";
import { parseInstant } from "./time.js";
import { chargeKeyOf, type Fact, LIMIT_KEYS, type LoopDocument, type Step } from "./types.js";

export const problem = (code: string, path: string, message: string): Problem => ({
  code,
  path,
  message,
});

/** Steps equal, with deadlines compared as instants (any RFC 3339 spelling of the same time). */
function sameStep(a: Step, b: Step): boolean {
  if (a.kind !== b.kind) return false;
  if ("deadline" in a && "deadline" in b) {
    if (parseInstant(a.deadline) !== parseInstant(b.deadline)) return false;
    return canonicalJson({ ...a, deadline: "" }) === canonicalJson({ ...b, deadline: "" });
  }
  return canonicalJson(a) === canonicalJson(b);
}

/**
 * Every fact legal in order: sequences contiguous from 1, each fact exactly what the decider appends
 * for its command at its `recorded-at`, given the fold of the facts before it. Returns the fold, or
 * the problem at the first bad fact.
 */
export function checkFacts(facts: readonly Fact[], base = "/facts"): Result<LoopState> {
  let state = initialState();
  for (const [i, fact] of facts.entries()) {
    const at = `${base}/${i}`;
    const n = i + 1;
    if (fact.sequence !== n) {
      return fail([
        problem(
          "loop/sequence-gap",
          `${at}/sequence`,
          `fact ${i} has sequence ${fact.sequence}; sequences are contiguous from 1, so it must be ${n}`,
        ),
      ]);
    }
    const recordedAt = fact["recorded-at"];
    const ms = parseInstant(recordedAt);
    if (ms === undefined || !/[Zz]$/.test(recordedAt)) {
      return fail([
        problem(
          "loop/recorded-at",
          `${at}/recorded-at`,
          `fact ${n}: recorded-at ${JSON.stringify(recordedAt)} is not an RFC 3339 UTC time with Z`,
        ),
      ]);
    }
    const decision = decide(state, commandOf(fact), new Date(ms));
    switch (decision.result) {
      case "refused":
        return fail([
          {
            ...problem(
              decision.refusal.code,
              at,
              `fact ${n} (${fact.step.kind}) was not legal: ${decision.refusal.message}`,
            ),
            ...(decision.refusal.counter === undefined
              ? {}
              : { detail: { counter: decision.refusal.counter } }),
          },
        ]);
      case "replayed":
        return fail([
          problem(
            "loop/duplicate-fact",
            at,
            `fact ${n} (${fact.step.kind}) repeats fact ${decision.fact?.sequence}: a replay appends nothing`,
          ),
        ]);
      case "appended": {
        const expected = decision.fact;
        if (expected["query/id"] !== fact["query/id"] || !sameStep(expected.step, fact.step)) {
          return fail([
            problem(
              "loop/fact-mismatch",
              at,
              `fact ${n} is not what its command appends at ${recordedAt}: expected ${canonicalJson({ "query/id": expected["query/id"], step: expected.step })}`,
            ),
          ]);
        }
        state = evolve(state, fact);
        break;
      }
    }
  }
  return ok(state);
}

export interface DocumentCheckOptions {
  /** Check `state` against this instant; without it an unstopped loop may say open or deadline-passed. */
  readonly now?: Date;
}

/** The projection fields of `doc` against the fold; every disagreement, each at its path. */
function projectionProblems(doc: LoopDocument, state: LoopState, now?: Date): Problem[] {
  const problems: Problem[] = [];
  const differ = (path: string, what: string, stated: unknown, folded: unknown) =>
    problems.push(
      problem(
        "loop/projection-mismatch",
        path,
        `${what} says ${JSON.stringify(stated)}, the facts fold to ${JSON.stringify(folded)}`,
      ),
    );
  const opening = state.opening;
  if (opening === undefined) return problems;
  if (doc["query/id"] !== opening.query)
    differ("/query/id", "query/id", doc["query/id"], opening.query);
  if (doc["binding/ref"] !== opening.bindingRef) {
    differ("/binding/ref", "binding/ref", doc["binding/ref"], opening.bindingRef);
  }
  for (const key of LIMIT_KEYS) {
    if (doc.limits[key] !== opening.limits[key]) {
      differ(pointer("limits", key), key, doc.limits[key], opening.limits[key]);
    }
  }
  if (parseInstant(doc.deadline) !== state.deadlineMs) {
    differ("/deadline", "the deadline", doc.deadline, state.deadline);
  }
  const spent = spentToWire(state);
  for (const key of Object.keys(spent) as (keyof typeof spent)[]) {
    if (doc.spent[key] !== spent[key])
      differ(pointer("spent", key), `spent ${key}`, doc.spent[key], spent[key]);
  }
  const stop = state.stop === undefined ? undefined : stopToWire(state.stop);
  if (canonicalJson(doc.stop ?? null) !== canonicalJson(stop ?? null)) {
    const by = state.stop === undefined ? "" : ` (set by fact ${state.stop.sequence})`;
    problems.push(
      problem(
        "loop/stop-mismatch",
        "/stop",
        `the stop says ${JSON.stringify(doc.stop ?? null)}, the facts fold to ${JSON.stringify(stop ?? null)}${by}`,
      ),
    );
  }
  if (now !== undefined) {
    const expected = stateNameAt(state, now.getTime());
    if (doc.state !== expected) differ("/state", "state", doc.state, expected);
  } else if ((doc.state === "stopped") !== (state.stop !== undefined)) {
    differ(
      "/state",
      "state",
      doc.state,
      state.stop === undefined ? "open or deadline-passed" : "stopped",
    );
  }
  return problems;
}

/** Check a loop document (parsed JSON) end to end; on success, the fold of its facts. */
export function checkLoopDocument(
  value: unknown,
  options: DocumentCheckOptions = {},
): Result<LoopState> {
  const errors = validateLinear(contractValidators().loop, contractSources().loop, value);
  if (errors !== null) {
    return fail(
      errors.map((e) =>
        problem("loop/schema", e.instancePath, `${e.message ?? "is invalid"} (${e.keyword})`),
      ),
    );
  }
  const doc = value as LoopDocument;
  const folded = checkFacts(doc.facts);
  if (!folded.ok) return folded;
  const problems = projectionProblems(doc, folded.value, options.now);
  return problems.length === 0 ? folded : fail(problems);
}

/**
 * The first break in a stored loop's rows: a fact of another query, a hash that does not chain to
 * the fact before it, or a charge key that is not its step's.
 */
export function chainProblem(query: string, stored: readonly StoredFact[]): Problem | undefined {
  let previous = GENESIS_HASH;
  for (const [i, row] of stored.entries()) {
    const at = `/facts/${i}`;
    if (row.fact["query/id"] !== query) {
      return problem(
        "loop/fact-mismatch",
        `${at}/query~1id`,
        `fact ${i + 1} belongs to ${row.fact["query/id"]}`,
      );
    }
    const hash = chainHash(previous, row.fact);
    if (row.hash !== hash) {
      return problem(
        "store/chain-broken",
        at,
        `fact ${row.fact.sequence}: its hash does not chain to the fact before it`,
      );
    }
    if (row.chargeKey !== chargeKeyOf(row.fact.step)) {
      return problem(
        "store/charge-key-mismatch",
        at,
        `fact ${row.fact.sequence}: stored charge key ${JSON.stringify(row.chargeKey)} is not its step's`,
      );
    }
    previous = hash;
  }
  return undefined;
}

/** A stored proposal or execution read as its kind, and the ref it names itself by. */
function storedRef(
  kind: "proposal" | "execution",
  body: unknown,
): Result<{ readonly ref: string; readonly body: object }> {
  if (kind === "proposal") {
    const r = readRecordBody("proposal", body);
    return r.ok ? ok({ ref: r.value["proposal/ref"], body: r.value }) : fail(r.errors);
  }
  const r = readRecordBody("execution", body);
  return r.ok ? ok({ ref: r.value["execution/ref"], body: r.value }) : fail(r.errors);
}

/** The projection of a fold as of `now`, validated as a seed loop document. */
export function projectionSchemaProblems(state: LoopState, now: Date): Problem[] {
  const doc = project(state, now);
  const validate = contractValidators().loop;
  if (validate(doc)) return [];
  return (validate.errors ?? []).map((e) =>
    problem("loop/schema", e.instancePath, `the projection ${e.message ?? "is invalid"}`),
  );
}

/**
 * Check a stored loop's structure: hash chain intact, charge keys as the facts give them, every
 * fact legal in order, the records its facts introduce present (cycle-opened → proposal,
 * concluded → execution) and reproducing their refs, and the projection a schema-valid loop
 * document. (`auditLoop` in audit.ts checks everything else: signatures, heads, every record.)
 */
export function checkStoredLoop(
  query: string,
  stored: readonly StoredFact[],
  records: ReadonlyMap<string, LedgerRecord>,
  now: Date,
): Result<LoopState> {
  if (stored.length === 0)
    return fail([problem("loop/not-opened", "", `no loop ${query} in the store`)]);
  const broken = chainProblem(query, stored);
  if (broken !== undefined) return fail([broken]);
  const facts = stored.map((r) => r.fact);
  const folded = checkFacts(facts);
  if (!folded.ok) return folded;
  for (const [i, fact] of facts.entries()) {
    const step = fact.step;
    const needs =
      step.kind === "cycle-opened"
        ? {
            ref: step["proposal/ref"],
            prefix: PROPOSAL_PREFIX,
            field: PROPOSAL_REF_FIELD,
            what: "proposal" as const,
          }
        : step.kind === "concluded"
          ? {
              ref: step["execution/ref"],
              prefix: EXECUTION_PREFIX,
              field: EXECUTION_REF_FIELD,
              what: "execution" as const,
            }
          : undefined;
    if (needs === undefined) continue;
    const record = records.get(needs.ref);
    if (record === undefined) {
      return fail([
        problem(
          "store/record-missing",
          `/facts/${i}`,
          `fact ${fact.sequence}: the ${needs.what} record ${needs.ref} is not in the store`,
        ),
      ]);
    }
    const read = storedRef(needs.what, record.body);
    if (!read.ok) {
      return fail([
        problem(
          "store/record-mismatch",
          `/facts/${i}`,
          `fact ${fact.sequence}: the stored ${needs.what} record ${needs.ref} is not one: ${read.errors[0]?.message ?? "invalid"}`,
        ),
      ]);
    }
    if (
      !hasValidContentRef(needs.prefix, needs.field, read.value.body) ||
      read.value.ref !== needs.ref
    ) {
      return fail([
        problem(
          "store/record-mismatch",
          `/facts/${i}`,
          `fact ${fact.sequence}: the stored ${needs.what} record does not reproduce its ref ${needs.ref}`,
        ),
      ]);
    }
  }
  const schema = projectionSchemaProblems(folded.value, now);
  return schema.length === 0 ? folded : fail(schema);
}
