// Every content-addressed part of a definition is verified, and every named part is run or refused,
// before any loop opens: each refusal below breaks exactly one rule, names the part, and leaves the
// store without a loop. Warnings (a setting a provider cannot honour) never refuse.
import { rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { MemoryLedgerStore } from "../../src/adapters/store/memory-ledger-store.js";
import { createWarrant } from "../../src/library/create-warrant.js";
import { defineTool } from "../../src/library/define-tool.js";
import type { WarrantOptions } from "../../src/library/options.js";
import { accept, harness, result } from "../runtime/harness.js";
import { DEMO, definition, folder, jsonl, says, type Written, writePack } from "./fixture.js";

const plan = says("Plan", {
  hypothesis: "h",
  steps: [{ id: "look", action: "observe", read: ["src/slugify.js"] }],
});

/** A pack whose implementer is `extra` over a scripted definition with a skill and memory. */
async function packWith(
  change: (w: Written, d: Record<string, unknown>) => void | Promise<void> = () => {},
  packExtra: Record<string, unknown> = {},
): Promise<{ w: Written; pack: string }> {
  const w = folder();
  w.write("agents/skills/notes/SKILL.md", "---\ndescription: Notes.\n---\nbody\n");
  w.write("agents/memory/facts.md", "facts\n");
  w.write("agents/implementer.jsonl", jsonl([plan, plan, plan]));
  const d = definition("implementer", {
    models: [{ provider: "scripted", model: "implementer.jsonl" }],
    skills: [{ name: "notes", cid: await w.cid("agents/skills/notes") }],
    memory: [
      {
        path: "memory/facts.md",
        backend: "filesystem",
        writable: false,
        cid: await w.cid("agents/memory/facts.md"),
      },
    ],
  });
  await change(w, d);
  w.write("agents/implementer.json", JSON.stringify(d));
  const pack = writePack(
    w,
    { implementer: "agents/implementer.json", reviewer: `${DEMO}/../agents/reviewer.json` },
    packExtra,
  );
  return { w, pack };
}

async function warrantWith(options: Partial<WarrantOptions> = {}) {
  return createWarrant({
    store: new MemoryLedgerStore(),
    sandbox: "none",
    approver: "auto",
    signer: "none",
    ...options,
  });
}

/** The run is refused with `code` at `at` before any loop opens; the check says the same. */
async function refused(
  pack: string,
  code: string,
  at: string,
  options: Partial<WarrantOptions> = {},
) {
  const warrant = await warrantWith(options);
  const check = await warrant.checkDefinitions(pack);
  expect(check.problems.map((p) => [p.code, p.path])).toEqual([[code, at]]);
  await expect(warrant.run(pack).result).rejects.toMatchObject({ code });
  expect(await warrant.loops()).toEqual([]);
  return check.problems[0]?.message ?? "";
}

describe("checks before any loop opens", () => {
  it("a definition whose parts all verify runs clean: no problem, no warning", async () => {
    const { pack } = await packWith();
    const check = await (await warrantWith()).checkDefinitions(pack);
    expect(check.problems).toEqual([]);
    expect(check.warnings).toEqual([]);
    expect(check.agents.implementer?.skills).toEqual([
      expect.objectContaining({ name: "notes", verified: true }),
    ]);
  });

  it("a skill edited after its CID was computed: definition/skill-cid-mismatch, naming the skill", async () => {
    const { pack } = await packWith((w) => {
      w.write("agents/skills/notes/SKILL.md", "---\ndescription: Notes.\n---\nedited\n");
    });
    const message = await refused(
      pack,
      "definition/skill-cid-mismatch",
      "/agents/implementer/skills/0/cid",
    );
    expect(message).toContain("skill notes");
  });

  it("a file added to a skill's folder changes its CID too (hidden ones included)", async () => {
    const { pack } = await packWith((w) => {
      w.write("agents/skills/notes/.hidden", "x");
    });
    await refused(pack, "definition/skill-cid-mismatch", "/agents/implementer/skills/0/cid");
  });

  it("a skill found nowhere: definition/skill-missing; found under a --skills folder, it runs", async () => {
    const { w, pack } = await packWith();
    const elsewhere = path.join(w.dir, "elsewhere");
    w.write("elsewhere/notes/SKILL.md", "---\ndescription: Notes.\n---\nbody\n");
    rmSync(w.file("agents/skills"), { recursive: true });
    await refused(pack, "definition/skill-missing", "/agents/implementer/skills/0");
    const check = await (await warrantWith({ skills: [elsewhere] })).checkDefinitions(pack);
    expect(check.problems).toEqual([]);
  });

  it("read-only memory edited after its CID was computed: definition/memory-cid-mismatch", async () => {
    const { pack } = await packWith((w) => {
      w.write("agents/memory/facts.md", "facts, edited\n");
    });
    const message = await refused(
      pack,
      "definition/memory-cid-mismatch",
      "/agents/implementer/memory/0/cid",
    );
    expect(message).toContain("memory/facts.md");
  });

  it("memory outside the definition's folder, by `..` or by a link: definition/memory-path", async () => {
    const { pack } = await packWith(async (w, d) => {
      w.write("outside.md", "secret\n");
      (d.memory as Record<string, unknown>[])[0] = {
        path: "../outside.md",
        backend: "filesystem",
        writable: false,
        cid: await w.cid("outside.md"),
      };
    });
    await refused(pack, "definition/memory-path", "/agents/implementer/memory/0/path");
    const linked = await packWith(async (w, d) => {
      w.write("outside.md", "secret\n");
      symlinkSync(w.file("outside.md"), w.file("agents/memory/link.md"));
      (d.memory as Record<string, unknown>[])[0] = {
        path: "memory/link.md",
        backend: "filesystem",
        writable: false,
        cid: await w.cid("outside.md"),
      };
    });
    await refused(linked.pack, "definition/memory-path", "/agents/implementer/memory/0/path");
  });

  it("read-only memory that is not text, or too large for a prompt, is refused", async () => {
    const binary = await packWith(async (w, d) => {
      writeFileSync(w.file("agents/memory/facts.md"), Uint8Array.from([0xff, 0xfe, 0x00]));
      (d.memory as Record<string, unknown>[])[0] = {
        path: "memory/facts.md",
        backend: "filesystem",
        writable: false,
        cid: await w.cid("agents/memory/facts.md"),
      };
    });
    await refused(binary.pack, "definition/memory-not-text", "/agents/implementer/memory/0/path");
    const large = await packWith(async (w, d) => {
      w.write("agents/memory/facts.md", "x".repeat(64 * 1024 + 1));
      (d.memory as Record<string, unknown>[])[0] = {
        path: "memory/facts.md",
        backend: "filesystem",
        writable: false,
        cid: await w.cid("agents/memory/facts.md"),
      };
    });
    await refused(large.pack, "definition/memory-too-large", "/agents/implementer/memory/0/path");
  });

  it("an unknown provider: definition/provider-unknown, naming it", async () => {
    const { pack } = await packWith((_w, d) => {
      d.models = [{ provider: "gemini", model: "gemini-pro" }];
    });
    const message = await refused(
      pack,
      "definition/provider-unknown",
      "/agents/implementer/models/0/provider",
    );
    expect(message).toContain('"gemini"');
  });

  it("an openai-compatible model without a base URL: definition/base-url-missing", async () => {
    const { pack } = await packWith((_w, d) => {
      d.models = [{ provider: "openai-compatible", model: "m" }];
    });
    const previous = process.env.WARRANT_OPENAI_COMPATIBLE_BASE_URL;
    delete process.env.WARRANT_OPENAI_COMPATIBLE_BASE_URL;
    try {
      await refused(pack, "definition/base-url-missing", "/agents/implementer/models/0");
    } finally {
      if (previous !== undefined) process.env.WARRANT_OPENAI_COMPATIBLE_BASE_URL = previous;
    }
  });

  it("an openai or anthropic model with no key in the environment: model/missing-key", async () => {
    const { pack } = await packWith((_w, d) => {
      d.models = [{ provider: "anthropic", model: "claude-x" }];
    });
    const previous = process.env.ANTHROPIC_API_KEY;
    delete process.env.ANTHROPIC_API_KEY;
    try {
      await refused(pack, "model/missing-key", "/agents/implementer/models/0");
    } finally {
      if (previous !== undefined) process.env.ANTHROPIC_API_KEY = previous;
    }
  });

  it("middleware Warrant does not run: definition/middleware-unsupported; a config it does not read: definition/middleware-config", async () => {
    const unknown = await packWith((_w, d) => {
      d.middleware = [{ name: "pii-redaction" }];
    });
    const message = await refused(
      unknown.pack,
      "definition/middleware-unsupported",
      "/agents/implementer/middleware/0/name",
    );
    expect(message).toContain('"pii-redaction"');
    const config = await packWith((_w, d) => {
      d.middleware = [{ name: "call-limit", config: { maxCalls: 0 } }];
    });
    await refused(
      config.pack,
      "definition/middleware-config",
      "/agents/implementer/middleware/0/config",
    );
  });

  it("a declared tool nothing offers: definition/tool-unbound; one whose implementation accepts more: definition/tool-schema-wider", async () => {
    const narrow = {
      type: "object",
      properties: { a: { type: "number" } },
      required: ["a"],
      additionalProperties: false,
    };
    const unbound = await packWith((_w, d) => {
      d.tools = [{ name: "calc.add", description: "Adds.", inputSchema: narrow }];
    });
    await refused(unbound.pack, "definition/tool-unbound", "/agents/implementer/tools/0/name");
    const wide = defineTool({
      name: "calc.add",
      description: "Adds.",
      inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } },
      execute: () => "0",
    });
    await refused(
      unbound.pack,
      "definition/tool-schema-wider",
      "/agents/implementer/tools/0/inputSchema",
      {
        tools: [wide],
      },
    );
    const same = defineTool({
      name: "calc.add",
      description: "Adds.",
      inputSchema: narrow,
      execute: () => "0",
    });
    const check = await (await warrantWith({ tools: [same] })).checkDefinitions(unbound.pack);
    expect(check.problems).toEqual([]);
    expect(check.agents.implementer?.tools).toEqual([{ name: "calc.add", boundTo: "calc.add" }]);
  });

  it("namespace-scoped memory with no namespace: definition/memory-namespace-missing; the pack's or the run's namespace lets it run", async () => {
    const change = (_w: Written, d: Record<string, unknown>) => {
      d.memory = [
        { path: "team.md", backend: "store", writable: true, scope: { kind: "namespace" } },
      ];
    };
    const { pack } = await packWith(change);
    await refused(
      pack,
      "definition/memory-namespace-missing",
      "/agents/implementer/memory/0/scope",
    );
    expect(
      (await (await warrantWith({ namespace: "team-a" })).checkDefinitions(pack)).problems,
    ).toEqual([]);
    const named = await packWith(change, { memoryNamespace: "team-b" });
    expect((await (await warrantWith()).checkDefinitions(named.pack)).problems).toEqual([]);
  });

  it("a sub-agent's own parts are checked too, at its pointer", async () => {
    const nested = await packWith((_w, d) => {
      d.subAgents = [definition("helper", { models: [{ provider: "nowhere", model: "m" }] })];
    });
    await refused(
      nested.pack,
      "definition/provider-unknown",
      "/agents/implementer/subAgents/0/models/0/provider",
    );
  });

  it("a setting the provider cannot honour is a warning, and the run goes on", async () => {
    const { pack } = await packWith((_w, d) => {
      d.models = [
        {
          provider: "scripted",
          model: "implementer.jsonl",
          settings: { temperature: 0.1, maxTokens: 1000 },
        },
      ];
    });
    const check = await (await warrantWith()).checkDefinitions(pack);
    expect(check.problems).toEqual([]);
    expect(check.warnings.map((p) => [p.code, p.path])).toEqual([
      ["definition/setting-unhonoured", "/agents/implementer/models/0/settings"],
    ]);
    expect(check.warnings[0]?.message).toContain("temperature");
  });

  it("a skill edited after its loop opened: resume refuses before any further charge", async () => {
    const { w, pack } = await packWith();
    const h = await harness(
      { reviewer: [accept], summarizer: [result] },
      { pack, definitionRoles: ["implementer"] },
    );
    const before = (await h.store.readFacts(h.query)).length;
    w.write("agents/skills/notes/SKILL.md", "---\ndescription: Notes.\n---\nedited later\n");
    await expect(h.drive()).rejects.toMatchObject({ code: "definition/skill-cid-mismatch" });
    expect(await h.store.readFacts(h.query)).toHaveLength(before);
  });
});
