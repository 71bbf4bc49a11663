// Is the first request enough? A model that knows only what a request says (the schema-reading
// server: it reads the payload schemas, the rules and the evidence, and replays nothing) answers
// each role's first request, in tool mode and in JSON mode, with a message the host accepts: the
// implementer's Plan passes the task pack's own check with no repair.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadPack } from "../../src/adapters/fs/pack-loader.js";
import { createModelFromUri } from "../../src/adapters/models/model-uri.js";
import type { CycleView } from "../../src/core/loop/next-action.js";
import type { Role } from "../../src/core/loop/types.js";
import { matchesAny } from "../../src/core/taskpack/glob.js";
import { checkPlan } from "../../src/core/taskpack/plan-check.js";
import { createAgentPassages } from "../../src/runtime/agent-passages.js";
import {
  implementerEvidence,
  reviewerEvidence,
  summarizerEvidence,
} from "../../src/runtime/evidence.js";
import { readLedger } from "../../src/runtime/ledger-view.js";
import type { LoadedPack } from "../../src/runtime/task-pack.js";
import { repoRoot } from "../helpers/cli.js";
import { type SchemaReadingServer, startSchemaReadingServer } from "./schema-reading-server.js";

let server: SchemaReadingServer;
let dir = "";
let demo: LoadedPack;
let other: LoadedPack;

async function load(file: string): Promise<LoadedPack> {
  const r = await loadPack(file);
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.value;
}

beforeAll(async () => {
  server = await startSchemaReadingServer();
  dir = mkdtempSync(path.join(tmpdir(), "warrant-schema-reader-"));
  const demoFile = path.join(repoRoot, "examples/fix-failing-test/task-pack.json");
  demo = await load(demoFile);
  // The same task told differently: other profile names and arguments, another patch policy.
  // biome-ignore lint/suspicious/noExplicitAny: the test rewrites the document freely.
  const doc = JSON.parse(readFileSync(demoFile, "utf8")) as Record<string, any>;
  const examples = path.join(repoRoot, "examples");
  doc.workspace = path.join(examples, "fix-failing-test/workspace");
  for (const role of Object.keys(doc.agents))
    doc.agents[role] = path.join(examples, "agents", `${role}.json`);
  doc.commands = {
    "list-sources": {
      effect: "observation",
      argv: ["ls", "{dir}"],
      args: {
        type: "object",
        required: ["dir"],
        properties: { dir: { type: "string", minLength: 3 } },
        additionalProperties: false,
      },
      timeoutMs: 5000,
      maxOutputBytes: 4096,
    },
    suite: doc.commands["run-tests"],
  };
  doc.verifier.checks = [{ name: "suite-passes", command: "suite" }];
  doc.patchPolicy = { allow: ["lib/*.mjs", "src/**"], maxBytes: 2048 };
  const file = path.join(dir, "other.task-pack.json");
  writeFileSync(file, JSON.stringify(doc));
  other = await load(file);
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const empty = readLedger([], [], []);
const cycle: CycleView = {
  proposalRef: "corpus-experiment:p",
  reviews: [],
  admitted: false,
  stepsStarted: [],
};

async function firstAnswer(pack: LoadedPack, role: Role, mode: "tools" | "json_schema") {
  const made = createModelFromUri(`openai-compatible:${server.url}/v1#schema-reader?mode=${mode}`, {
    env: {},
  });
  if (!made.ok) throw new Error(JSON.stringify(made.errors));
  const evidence =
    role === "implementer"
      ? implementerEvidence(pack.pack, empty)
      : role === "reviewer"
        ? reviewerEvidence(pack.pack, empty, cycle)
        : summarizerEvidence(pack.pack, empty, cycle);
  const before = server.calls.length;
  const models = {
    override: () => ({ provider: made.value, uri: made.value.id }),
    definition: () => made.value,
  };
  const outcome = await createAgentPassages({ models }).run({
    query: "query:schema-reader",
    role,
    agentId: pack.agents[role]?.id ?? "",
    passageRef: `passage:${role}`,
    evidence,
    pack,
    priorCalls: 0,
    checkMessage: (m) => {
      if (m.type !== "Plan") return [];
      const checked = checkPlan(m.payload, pack.pack);
      return checked.ok ? [] : checked.errors;
    },
  });
  return { outcome, calls: server.calls.length - before };
}

describe("a model that reads only the request", () => {
  it.each(["tools", "json_schema"] as const)(
    "writes a Plan the pack admits from the implementer's first request (%s mode)",
    async (mode) => {
      for (const pack of [demo, other]) {
        const { outcome, calls } = await firstAnswer(pack, "implementer", mode);
        expect(server.failures).toEqual([]);
        expect(outcome.ok).toBe(true);
        if (!outcome.ok) return;
        expect(outcome.message.type).toBe("Plan");
        // One call, no repair: the first request said enough.
        expect(calls).toBe(1);
        expect(outcome.modelCalls).toBe(1);
        expect(outcome.usage?.repairs).toBe(0);
        const checked = checkPlan(outcome.message.payload, pack.pack);
        expect(checked.ok).toBe(true);
        if (!checked.ok) return;
        const [look, change] = checked.value.steps;
        // What it chose came from this pack's evidence, not from a script.
        expect(look?.kind).toBe("observe-command");
        if (look?.kind === "observe-command")
          expect(pack.pack.commands.has(look.profile.name)).toBe(true);
        expect(change?.kind).toBe("patch");
        if (change?.kind === "patch")
          expect(matchesAny(pack.pack.patchPolicy.allow, change.path)).toBe(true);
      }
      const plans = server.calls
        .slice(-2)
        .map((c) => c.payload as { steps: { profile?: string; path?: string }[] });
      expect(plans.map((p) => p.steps[0]?.profile)).toEqual(["run-tests", "list-sources"]);
      expect(plans.map((p) => p.steps[1]?.path)).toEqual(["src/notes", "lib/file.mjs"]);
    },
  );

  it.each(["tools", "json_schema"] as const)(
    "answers the reviewer with a Verdict and the summarizer with a Result from their first requests (%s mode)",
    async (mode) => {
      for (const role of ["reviewer", "summarizer"] as const) {
        const { outcome, calls } = await firstAnswer(demo, role, mode);
        expect(server.failures).toEqual([]);
        expect(calls).toBe(1);
        expect(outcome.ok && outcome.message.type).toBe(role === "reviewer" ? "Verdict" : "Result");
      }
    },
  );
});
