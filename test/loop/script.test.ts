// Loop command scripts (docs/spec/loop.md) and the simulation over them.
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseScript } from "../../src/core/loop/script.js";
import { simulate } from "../../src/core/loop/simulate.js";
import { repoRoot } from "../helpers/cli.js";
import { execution, proposal } from "./gwt.js";

const demo = JSON.parse(
  readFileSync(path.join(repoRoot, "examples/loop-scripts/demo.json"), "utf8"),
) as Record<string, unknown> & { commands: Record<string, unknown>[] };

const base = {
  query: "query:s",
  binding: "operator-task-local-binding:s",
  operator: "node-operator-binding:alice",
  layers: [{ "max/passages": 2, "max/experiments": 1, "max/wall-time-ms": 60_000 }],
};
const withCommands = (commands: unknown[], extra: Record<string, unknown> = {}) => ({
  ...base,
  commands,
  ...extra,
});
const errorsOf = (value: unknown) => {
  const r = parseScript(value);
  if (r.ok) throw new Error("expected invalid");
  return r.errors;
};

describe("parseScript", () => {
  it("reads the demo script; `now` is the script's", () => {
    const r = parseScript(demo);
    expect(r.ok).toBe(true);
    if (r.ok) {
      expect(r.value.commands).toHaveLength(demo.commands.length);
      expect(r.value.now).toBe("2026-12-01T10:30:00Z");
      expect(r.value.commands[0]?.command).toMatchObject({ op: "open", query: "query:demo-1" });
    }
  });
  it("without `now`, projects at the last command's time", () => {
    const r = parseScript(withCommands([{ at: "2026-12-01T10:00:00Z", op: "open" }]));
    expect(r.ok && r.value.now).toBe("2026-12-01T10:00:00Z");
  });
  it("refuses missing or extra top-level fields", () => {
    expect(errorsOf({ ...base })[0]).toMatchObject({ code: "loop/script-invalid", path: "" });
    expect(errorsOf(withCommands([], { extra: 1 }))[0]?.code).toBe("loop/script-invalid");
    expect(errorsOf({ ...withCommands([]), query: "demo" })[0]?.path).toBe("/query");
  });
  it("refuses layers the contract cannot carry", () => {
    expect(errorsOf({ ...withCommands([]), layers: [] })[0]?.path).toBe("/layers");
    expect(errorsOf({ ...withCommands([]), layers: [{ "max/passages": 0 }] })[0]?.path).toMatch(
      /^\/layers\/0/,
    );
  });
  it("refuses an unknown op and a malformed command, at the command's path", () => {
    expect(errorsOf(withCommands([{ at: "2026-12-01T10:00:00Z", op: "explode" }]))[0]?.path).toBe(
      "/commands/0/op",
    );
    const errs = errorsOf(
      withCommands([
        { at: "2026-12-01T10:00:00Z", op: "open" },
        { at: "2026-12-01T10:00:01Z", op: "open-cycle", proposal: "corpus-experiment:x" },
      ]),
    );
    expect(errs[0]?.path).toBe("/commands/1/proposal");
  });
  it("refuses a command without `at`, or with an `at` that is no date-time", () => {
    expect(errorsOf(withCommands([{ op: "open" }]))[0]?.path).toBe("/commands/0");
    expect(errorsOf(withCommands([{ at: "noon", op: "open" }]))[0]?.path).toBe("/commands/0/at");
  });
  it("conclude takes `refusal` exactly when the outcome is refused", () => {
    const c = {
      at: "2026-12-01T10:00:00Z",
      op: "conclude",
      proposal: proposal(1),
      execution: execution(1),
    };
    expect(
      parseScript(withCommands([{ ...c, outcome: "refused", refusal: "hil/denied" }])).ok,
    ).toBe(true);
    expect(errorsOf(withCommands([{ ...c, outcome: "refused" }]))[0]?.path).toBe("/commands/0");
    expect(
      errorsOf(withCommands([{ ...c, outcome: "verified", refusal: "hil/denied" }])).length,
    ).toBeGreaterThan(0);
    expect(
      errorsOf(withCommands([{ ...c, outcome: "refused", refusal: "no/such" }]))[0]?.path,
    ).toBe("/commands/0/refusal");
  });
});

describe("simulate", () => {
  const run = (value: unknown) => {
    const r = parseScript(value);
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    return simulate(r.value);
  };
  it("the demo: appended, replayed and refused outcomes in order, the document as of now", () => {
    const sim = run(demo);
    expect(sim.outcomes.map((o) => o.result)).toEqual([
      "appended",
      "appended",
      "appended",
      "appended",
      "appended",
      "replayed",
      "appended",
      "refused",
      "appended",
      "refused",
      "appended",
      "appended",
      "appended",
      "appended",
      "replayed",
    ]);
    expect(sim.outcomes[7]).toEqual({
      op: "admit-run",
      result: "refused",
      code: "loop/cycle-missing",
    });
    expect(sim.outcomes[5]).toEqual({ op: "admit-run", result: "replayed", sequence: 5 });
    expect(sim.loop?.state).toBe("stopped");
    expect(sim.loop?.facts).toHaveLength(11);
  });
  it("a refused command appends nothing and the script goes on", () => {
    const sim = run(
      withCommands([
        { at: "2026-12-01T10:00:00Z", op: "open" },
        {
          at: "2026-12-01T10:00:01Z",
          op: "charge-passage",
          role: "implementer",
          agent: "agent:a",
          passage: "passage:1",
        },
        {
          at: "2026-12-01T10:00:02Z",
          op: "charge-passage",
          role: "implementer",
          agent: "agent:a",
          passage: "passage:2",
        },
        {
          at: "2026-12-01T10:00:03Z",
          op: "charge-passage",
          role: "implementer",
          agent: "agent:a",
          passage: "passage:3",
        },
        { at: "2026-12-01T10:00:04Z", op: "cancel" },
      ]),
    );
    expect(sim.outcomes[3]).toEqual({
      op: "charge-passage",
      result: "refused",
      code: "loop/budget-exhausted",
      counter: "max/passages",
    });
    expect(sim.outcomes[4]).toEqual({ op: "cancel", result: "appended", sequence: 4 });
    expect(sim.loop?.facts).toHaveLength(4);
  });
  it("loop is null when the loop was never opened", () => {
    const sim = run(
      withCommands(
        [
          { at: "2026-12-01T10:00:00Z", op: "cancel" },
          { at: "2026-12-01T10:00:00Z", op: "open" },
        ],
        {
          layers: [
            { "max/passages": 2, "max/experiments": 1, "max/wall-time-ms": 60_000 },
            { "max/passages": 3 },
          ],
        },
      ),
    );
    expect(sim.outcomes).toEqual([
      { op: "cancel", result: "refused", code: "loop/not-opened" },
      { op: "open", result: "refused", code: "local-binding/outside-package-ceiling" },
    ]);
    expect(sim.loop).toBeNull();
    expect(run(withCommands([])).loop).toBeNull();
  });
  it("the state is taken as of `now`", () => {
    const sim = run(
      withCommands([{ at: "2026-12-01T10:00:00Z", op: "open" }], { now: "2026-12-01T10:01:00Z" }),
    );
    expect(sim.loop?.state).toBe("deadline-passed");
  });
});
