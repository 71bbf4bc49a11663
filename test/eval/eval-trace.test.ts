// An eval traced: one `warrant.eval` span, each cell a span under it with its outcome, and each
// cell's drive (its `invoke_workflow` root) under the cell's span.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  InMemorySpanExporter,
  SimpleSpanProcessor,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import { afterAll, describe, expect, it } from "vitest";
import { createWarrant } from "../../src/index.js";
import { repoRoot } from "../helpers/cli.js";

const EXAMPLE = path.join(repoRoot, "examples/evals");
const dir = mkdtempSync(path.join(tmpdir(), "warrant-eval-trace-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const scripted = (agent: string) =>
  Object.fromEntries(
    ["implementer", "reviewer", "summarizer"].map((r) => [
      r,
      `scripted:${path.join(EXAMPLE, "scripts", agent, "{task}", `${r}.jsonl`)}`,
    ]),
  );

describe("an eval's spans", () => {
  it("puts every cell under one warrant.eval span and each cell's drive under its cell", async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new TracerProvider({
      spanProcessors: [new SimpleSpanProcessor({ exporter })],
    });
    const set = path.join(dir, "set.json");
    writeFileSync(
      set,
      JSON.stringify({
        schema: "warrant-eval-set.v1",
        name: "traced",
        approval: "auto",
        tasks: [{ id: "clamp", pack: path.join(EXAMPLE, "tasks/clamp/task-pack.json") }],
        agents: [
          { id: "fixer", models: scripted("fixer") },
          { id: "wrong-fixer", models: scripted("wrong-fixer") },
        ],
      }),
    );
    const warrant = await createWarrant({
      store: `sqlite:${path.join(dir, "ledger.db")}`,
      openTelemetry: { tracerProvider: provider },
    });
    try {
      const report = await warrant.evals.run(set).result;
      await provider.forceFlush();
      const spans = exporter.getFinishedSpans();
      const root = spans.filter((s) => s.name === "warrant.eval");
      expect(root).toHaveLength(1);
      const rootId = root[0]?.spanContext().spanId;
      expect(root[0]?.attributes).toMatchObject({
        "warrant.eval.id": report.eval,
        "warrant.eval.cells": 2,
        "warrant.eval.status": "complete",
        "warrant.eval.passed": 1,
      });
      const cells = spans.filter((s) => s.name.startsWith("warrant.eval.cell "));
      expect(cells.map((s) => s.name).sort()).toEqual([
        "warrant.eval.cell clamp fixer 1",
        "warrant.eval.cell clamp wrong-fixer 1",
      ]);
      for (const c of cells) {
        expect(c.parentSpanContext?.spanId).toBe(rootId);
        const outcome = c.attributes["warrant.eval.outcome"];
        expect(outcome).toBe(c.attributes["warrant.eval.agent"] === "fixer" ? "passed" : "failed");
        const drives = spans.filter(
          (s) =>
            s.name === "invoke_workflow clamp" &&
            s.attributes["warrant.query"] === c.attributes["warrant.query"],
        );
        expect(drives.length).toBeGreaterThanOrEqual(1);
        for (const d of drives) expect(d.parentSpanContext?.spanId).toBe(c.spanContext().spanId);
      }
    } finally {
      await warrant.close();
      await provider.shutdown();
    }
  }, 60_000);
});
