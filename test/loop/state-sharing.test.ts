// The loop state's charge-key index is shared along a line of evolved states instead of copied on
// every fact: each state must still see exactly its own facts, whatever was evolved from it or
// from the states before it. And the chain hash, now Node's SHA-256, is pinned to known values.
import { sha256 } from "@noble/hashes/sha2.js";
import { describe, expect, it } from "vitest";
import { chainHash, GENESIS_HASH } from "../../src/core/loop/chain.js";
import {
  evolve,
  fold,
  initialState,
  type LoopState,
  sharesIndex,
} from "../../src/core/loop/state.js";
import { chargeKeyOf, type Fact } from "../../src/core/loop/types.js";
import { canonicalJson } from "../../src/core/records/canonical.js";
import { history, open, passage } from "./gwt.js";

/** The charge key of a history's fact `i`. */
const keyOf = (facts: readonly Fact[], i: number) => chargeKeyOf((facts[i] as Fact).step);

/** What the state's index should be: each key at its last fact, in first-seen order. */
function expectedIndex(facts: readonly Fact[]): [string, Fact][] {
  const m = new Map<string, Fact>();
  for (const f of facts) m.set(chargeKeyOf(f.step), f);
  return [...m];
}

/** Every way of reading the index gives exactly the entries of the state's own facts. */
function expectIndexOf(state: LoopState, facts: readonly Fact[]): void {
  const entries = expectedIndex(facts);
  expect(state.facts).toEqual(facts);
  expect(state.byKey.size).toBe(entries.length);
  expect([...state.byKey]).toEqual(entries);
  expect([...state.byKey.entries()]).toEqual(entries);
  expect([...state.byKey.keys()]).toEqual(entries.map(([k]) => k));
  expect([...state.byKey.values()]).toEqual(entries.map(([, f]) => f));
  const seen: [string, Fact][] = [];
  state.byKey.forEach((f, k, map) => {
    expect(map).toBe(state.byKey);
    seen.push([k, f]);
  });
  expect(seen).toEqual(entries);
  for (const [k, f] of entries) {
    expect(state.byKey.get(k)).toBe(f);
    expect(state.byKey.has(k)).toBe(true);
  }
}

const line = history(
  open([{ "max/passages": 100, "max/experiments": 1, "max/wall-time-ms": 3_600_000 }]),
  ...Array.from({ length: 30 }, (_, i) => passage(i + 1)),
);

describe("loop state: the charge-key index along a line of states", () => {
  it("each state of a line sees its own facts' keys and none of the later ones", () => {
    const states: LoopState[] = [initialState()];
    for (const f of line) states.push(evolve(states.at(-1) as LoopState, f));
    states.forEach((s, n) => {
      expectIndexOf(s, line.slice(0, n));
      if (n < line.length) {
        expect(s.byKey.get(keyOf(line, n))).toBeUndefined();
        expect(s.byKey.has(keyOf(line, line.length - 1))).toBe(false);
      }
      expect(s).toEqual(fold(line.slice(0, n)));
    });
    // One index for the whole line: no state's evolution copied its keys.
    for (const s of states) expect(sharesIndex(s, states[0] as LoopState)).toBe(true);
    expect(sharesIndex(fold(line), states.at(-1) as LoopState)).toBe(false);
  });

  it("a state evolved twice branches: both children and the parent keep their own view", () => {
    const base = fold(line.slice(0, 10));
    const left = evolve(base, line[10] as Fact);
    const right = evolve(base, line[11] as Fact);
    const leftMore = evolve(left, line[12] as Fact);
    expectIndexOf(base, line.slice(0, 10));
    expectIndexOf(left, line.slice(0, 11));
    expectIndexOf(right, [...line.slice(0, 10), line[11] as Fact]);
    expectIndexOf(leftMore, [...line.slice(0, 11), line[12] as Fact]);
    expect(right.byKey.has(keyOf(line, 10))).toBe(false);
    expect(left.byKey.has(keyOf(line, 11))).toBe(false);
    // The first child went on with its parent's index; the second took its own.
    expect(sharesIndex(base, left)).toBe(true);
    expect(sharesIndex(left, leftMore)).toBe(true);
    expect(sharesIndex(base, right)).toBe(false);
  });

  it("an old state evolved after its line moved on leaves the line's tip as it was", () => {
    const states: LoopState[] = [fold(line.slice(0, 5))];
    for (const f of line.slice(5, 20)) states.push(evolve(states.at(-1) as LoopState, f));
    const tip = states.at(-1) as LoopState;
    const old = states[3] as LoopState;
    const other = fold([line[25] as Fact, line[26] as Fact], old);
    expectIndexOf(other, [...line.slice(0, 8), line[25] as Fact, line[26] as Fact]);
    expectIndexOf(tip, line.slice(0, 20));
    expect(evolve(tip, line[20] as Fact)).toEqual(fold(line.slice(0, 21)));
  });

  it("fold with no fact gives a state that shares the index without taking it from its source", () => {
    const base = fold(line.slice(0, 6));
    const same = fold([], base);
    const a = evolve(base, line[6] as Fact);
    const b = evolve(same, line[7] as Fact);
    expectIndexOf(a, line.slice(0, 7));
    expectIndexOf(b, [...line.slice(0, 6), line[7] as Fact]);
    expectIndexOf(same, line.slice(0, 6));
  });

  it("a key seen again (a log decide would not make) is the later fact's, and earlier states keep the first", () => {
    const first = line[3] as Fact;
    const again: Fact = {
      ...first,
      sequence: line.length + 1,
      "recorded-at": first["recorded-at"],
    };
    const before = fold(line);
    const after = evolve(before, again);
    expect(after.byKey.get(chargeKeyOf(first.step))).toBe(again);
    expect(after.byKey.size).toBe(before.byKey.size);
    expect([...after.byKey.keys()]).toEqual([...before.byKey.keys()]);
    expect(before.byKey.get(chargeKeyOf(first.step))).toBe(first);
    expectIndexOf(after, [...line, again]);
    expectIndexOf(before, line);
    expect(sharesIndex(before, after)).toBe(false);
    // The line goes on from either.
    expectIndexOf(evolve(before, line[0] as Fact), [...line, line[0] as Fact]);
  });

  it("a state made by hand, its index a plain Map, evolves as a fold of its facts", () => {
    const made = fold(line.slice(0, 4));
    const byHand: LoopState = { ...made, byKey: new Map(made.byKey) };
    expectIndexOf(evolve(byHand, line[4] as Fact), line.slice(0, 5));
    expectIndexOf(made, line.slice(0, 4));
    // Facts given by hand beside another state's index: the index is made from the facts.
    const other = history(
      open([{ "max/passages": 100, "max/experiments": 1, "max/wall-time-ms": 3_600_000 }]),
      ...Array.from({ length: 4 }, (_, i) => passage(i + 1, "reviewer", "agent:b2")),
    );
    const mixed: LoopState = { ...made, facts: other.slice(0, 4) };
    expectIndexOf(evolve(mixed, other[4] as Fact), other.slice(0, 5));
    expectIndexOf(made, line.slice(0, 4));
  });
});

describe("chainHash", () => {
  const fact: Fact = {
    "query/id": "query:demo-1",
    sequence: 2,
    "recorded-at": "2026-12-01T10:00:01.000Z",
    step: {
      kind: "passage-charged",
      role: "implementer",
      "agent/id": "agent:a1",
      "passage/ref": "passage:p1",
    },
  };
  const unicode: Fact = {
    ...fact,
    step: { ...fact.step, "passage/ref": "passage:ünïcode-€-😀" } as Fact["step"],
  };
  const independent = (previous: string, f: Fact) =>
    Buffer.from(sha256(new TextEncoder().encode(`${previous}\n${canonicalJson(f)}`))).toString(
      "hex",
    );

  it("is SHA-256 of the previous hash, a newline and the fact's JCS, as lowercase hex", () => {
    expect(chainHash(GENESIS_HASH, fact)).toBe(
      "8df27a4c7e25649b79968129aa85bc388fe94b7ae543bb62a8f43485517b9240",
    );
    expect(chainHash("ab".repeat(32), unicode)).toBe(
      "027550b12e3543b916dad89813e526c8423486b7845acd1e9e1d71631ef066e8",
    );
    for (const f of line) expect(chainHash(GENESIS_HASH, f)).toBe(independent(GENESIS_HASH, f));
    expect(chainHash("ab".repeat(32), unicode)).toBe(independent("ab".repeat(32), unicode));
  });
});
