// The constant lists that mirror a contract's enum hold exactly its values: `satisfies` in src/
// refuses a value the contract lacks, the types below refuse a list that misses one (tsc checks
// this file), and each list is compared with the contract's JSON, which the types are made from.
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { MemoryScopeKind } from "../src/core/contracts/types/agent-definition.v1.js";
import type * as Wire from "../src/core/contracts/types/ledger-records.v1.js";
import type { ModelTurnV1 } from "../src/core/contracts/types/model-turn.js";
import type { DeliberationLimits } from "../src/core/contracts/types/operator-task-common.v1.js";
import { LIMIT_KEYS, OUTCOMES, ROLES } from "../src/core/loop/types.js";
import { MEMORY_SCOPES } from "../src/core/records/memory-write.js";
import type { RecordBodies } from "../src/core/records/record-body.js";
import { DESCRIBED_KINDS } from "../src/core/records/record-schemas.js";
import { MESSAGE_TYPES } from "../src/core/turn/types.js";
import { repoRoot } from "./helpers/cli.js";

/** `true` only when every member of `Union` is in `List` (the other way `satisfies` checks). */
type Covers<List extends readonly unknown[], Union> = [Exclude<Union, List[number]>] extends [never]
  ? true
  : false;

const exhaustive: readonly true[] = [
  true satisfies Covers<typeof ROLES, Wire.Role>,
  true satisfies Covers<typeof OUTCOMES, Wire.Outcome>,
  true satisfies Covers<typeof LIMIT_KEYS, keyof DeliberationLimits>,
  true satisfies Covers<typeof MESSAGE_TYPES, NonNullable<ModelTurnV1["message"]>["type"]>,
  true satisfies Covers<typeof MEMORY_SCOPES, MemoryScopeKind>,
  true satisfies Covers<typeof DESCRIBED_KINDS, keyof RecordBodies>,
];

type Json = { readonly [k: string]: Json } | readonly Json[] | string | number | boolean | null;

function contract(file: string): Json {
  return JSON.parse(readFileSync(path.join(repoRoot, "contracts", file), "utf8")) as Json;
}

/** The value at `keys` below `doc`. */
function at(doc: Json, ...keys: string[]): Json {
  let v = doc;
  for (const k of keys) {
    if (typeof v !== "object" || v === null || Array.isArray(v)) throw new Error(`no ${k}`);
    const next = (v as { readonly [k: string]: Json })[k];
    if (next === undefined) throw new Error(`no ${k}`);
    v = next;
  }
  return v;
}

/** The property names of an object. */
function keysOf(v: Json): string[] {
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw new Error("not an object");
  return Object.keys(v);
}

/** The strings of an enum. */
function values(schema: Json): string[] {
  const e = at(schema, "enum");
  if (Array.isArray(e)) return e.filter((x): x is string => typeof x === "string");
  throw new Error("not an enum");
}

/** The strings of a oneOf of consts. */
function consts(schema: Json): string[] {
  const branches = at(schema, "oneOf");
  if (!Array.isArray(branches)) throw new Error("not a oneOf");
  return branches.map((b) => String(at(b, "const")));
}

describe("constant lists are the contracts' values, each once", () => {
  const ledger = contract("ledger-records.v1.json");
  const cases: [string, readonly string[], readonly string[]][] = [
    ["ROLES", ROLES, values(at(ledger, "$defs", "role"))],
    ["OUTCOMES", OUTCOMES, values(at(ledger, "$defs", "outcome"))],
    [
      "LIMIT_KEYS",
      LIMIT_KEYS,
      keysOf(
        at(
          contract("operator-task-common.v1.schema.json"),
          "$defs",
          "deliberationLimits",
          "properties",
        ),
      ),
    ],
    [
      "MESSAGE_TYPES",
      MESSAGE_TYPES,
      values(at(contract("model-turn.schema.json"), "properties", "message", "properties", "type")),
    ],
    [
      "MEMORY_SCOPES",
      MEMORY_SCOPES,
      consts(at(contract("agent-definition.v1.schema.json"), "$defs", "MemoryScopeKind")),
    ],
  ];
  for (const [name, list, wire] of cases)
    it(`${name}: ${wire.join(", ")}`, () => {
      expect(wire.length).toBeGreaterThan(1);
      expect([...list].sort()).toEqual([...new Set(wire)].sort());
      expect(new Set(list).size).toBe(list.length);
    });

  it("DESCRIBED_KINDS: each a definition of the ledger records contract, each once", () => {
    const defs = keysOf(at(ledger, "$defs"));
    expect(DESCRIBED_KINDS.filter((k) => !defs.includes(k))).toEqual([]);
    expect(new Set(DESCRIBED_KINDS).size).toBe(DESCRIBED_KINDS.length);
  });

  it("the type-level checks above hold (tsc refuses this file otherwise)", () => {
    expect(exhaustive.every((x) => x)).toBe(true);
  });
});
