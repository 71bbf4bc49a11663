// The loop core's benchmark: fold of the widest loop (1 366 facts), decide per command, and
// project + schema-validate the widest document. Also exports the widest script for the tests.
import { contractValidators } from "../../src/core/contracts/ajv.js";
import { decide } from "../../src/core/loop/decide.js";
import { project } from "../../src/core/loop/project.js";
import { parseScript } from "../../src/core/loop/script.js";
import { simulate } from "../../src/core/loop/simulate.js";
import { fold } from "../../src/core/loop/state.js";
import { formatInstant } from "../../src/core/loop/time.js";
import type { Fact, LoopCommand } from "../../src/core/loop/types.js";
import { digestOf } from "../../src/core/records/canonical.js";
import { measureSync } from "../util.js";
import type { BenchSuite } from "./index.js";

const T0 = Date.parse("2026-12-01T10:00:00Z");
const DAY_MS = 86_400_000;
const ref = (prefix: string, n: number) => `${prefix}:${digestOf({ n })}`;
const ROLES = ["implementer", "reviewer", "adversarial-critic", "summarizer"] as const;

/**
 * The widest loop the bounds allow, as a script (docs/spec/loop.md): 1 opening + 1 000 passages + 100 cycles +
 * 100 runs + 100 conclusions + 64 renewals + 1 cancellation = 1 366 facts, one command a second.
 */
export function widestScript(): Record<string, unknown> {
  const commands: Array<Record<string, unknown>> = [];
  const push = (c: Record<string, unknown>) => {
    commands.push({ at: formatInstant(T0 + commands.length * 1000), ...c });
  };
  push({ op: "open" });
  for (let cycle = 0; cycle < 100; cycle++) {
    for (let p = 0; p < 10; p++) {
      const n = cycle * 10 + p;
      push({
        op: "charge-passage",
        role: ROLES[n % ROLES.length],
        agent: `agent:a${n % 3}`,
        passage: `passage:p${n}`,
      });
    }
    const proposal = ref("corpus-experiment", cycle);
    push({ op: "open-cycle", proposal });
    push({ op: "admit-run", proposal });
    push({
      op: "conclude",
      proposal,
      execution: ref("corpus-task-pack-execution", cycle),
      outcome: "verification-failed",
    });
  }
  for (let r = 0; r < 64; r++) {
    push({ op: "renew", deadline: formatInstant(T0 + commands.length * 1000 + DAY_MS) });
  }
  push({ op: "cancel" });
  return {
    query: "query:widest",
    binding: "operator-task-local-binding:widest",
    operator: "node-operator-binding:bench",
    layers: [
      {
        "max/passages": 1000,
        "max/solver-passages": 1000,
        "max/reviewer-passages": 1000,
        "max/cycles": 100,
        "max/experiments": 100,
        "max/wall-time-ms": DAY_MS,
      },
    ],
    commands,
    now: formatInstant(T0 + commands.length * 1000),
  };
}

/** The facts of the widest loop. */
export function widestFacts(): readonly Fact[] {
  const script = parseScript(widestScript());
  if (!script.ok) throw new Error(`widest script invalid: ${JSON.stringify(script.errors)}`);
  const loop = simulate(script.value).loop;
  if (loop === null) throw new Error("widest loop never opened");
  return loop.facts;
}

export const loopSuite: BenchSuite = {
  name: "loop",
  async run() {
    const facts = widestFacts();
    const validate = contractValidators().loop;
    const state = fold(facts);
    const now = new Date(T0 + facts.length * 1000);
    const doc = project(state, now);
    if (facts.length !== 1366 || !validate(doc))
      throw new Error("widest loop is not 1 366 valid facts");
    const mid = fold(facts.slice(0, 700));
    const commands: LoopCommand[] = [
      { op: "charge-passage", role: "implementer", agent: "agent:a0", passage: "passage:new" },
      { op: "charge-passage", role: "implementer", agent: "agent:a0", passage: "passage:p0" },
      { op: "open-cycle", proposal: ref("corpus-experiment", 999) },
      { op: "admit-run", proposal: ref("corpus-experiment", 1) },
      { op: "cancel" },
    ];
    const decideAt = new Date(T0 + 700_000);
    let i = 0;
    const json = JSON.stringify(doc);
    return {
      facts: facts.length,
      foldWidestUs: measureSync(() => fold(facts), { iterations: 100, repeats: 9, warmup: 20 }),
      decidePerCommandUs: measureSync(
        () => decide(mid, commands[i++ % commands.length] as LoopCommand, decideAt),
        { iterations: 10_000 },
      ),
      projectWidestUs: measureSync(() => project(state, now), { iterations: 1000 }),
      projectAndValidateWidestUs: measureSync(() => validate(project(state, now)), {
        iterations: 50,
        warmup: 5,
      }),
      widestDocumentBytes: json.length,
    };
  },
};
