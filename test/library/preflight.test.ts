// The preflight before any loop opens: every role's model, keys, scripts and base URLs, the MCP
// servers' commands, a check another module adds, and the opt-in probe of live endpoints (against a
// local server). No report ever carries a key.

import { execFileSync } from "node:child_process";
import {
  chmodSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadPack } from "../../src/adapters/fs/pack-loader.js";
import {
  PREFLIGHT_CHECKS,
  type PreflightCheck,
  type PreflightSubject,
  preflight,
} from "../../src/library/preflight.js";
import type { LoadedPack } from "../../src/runtime/task-pack.js";
import { repoRoot } from "../helpers/cli.js";
import { startWireServer } from "../models/wire-server.js";

const KEY = "sk-preflight-secret-7731";
const scriptedDir = path.join(repoRoot, "examples/fix-failing-test/scripted");
const demoModels = {
  implementer: `scripted:${scriptedDir}/implementer.jsonl`,
  reviewer: `scripted:${scriptedDir}/reviewer.jsonl`,
  summarizer: `scripted:${scriptedDir}/summarizer.jsonl`,
};

let dir = "";
let demo: LoadedPack;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "warrant-preflight-"));
  const loaded = await loadPack(path.join(repoRoot, "examples/fix-failing-test/task-pack.json"));
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.errors));
  demo = loaded.value;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const subject = (over: Partial<PreflightSubject> = {}): PreflightSubject => ({
  pack: demo,
  models: demoModels,
  env: { PATH: process.env.PATH },
  ...over,
});

const codes = async (s: PreflightSubject) =>
  (await preflight(s)).problems.map((p) => [p.check, p.code, p.path, p.usage]);

function write(name: string, text: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
}

/** The demo pack with its implementer declaring `servers`, its definition file in `defDir`. */
function withServers(servers: unknown[], defDir = dir): LoadedPack {
  const implementer = demo.agents.implementer;
  if (implementer === undefined) throw new Error("no implementer");
  return {
    ...demo,
    agents: {
      ...demo.agents,
      implementer: {
        ...implementer,
        path: path.join(defDir, "implementer.json"),
        definition: { ...(implementer.definition as object), mcpServers: servers },
      },
    },
  };
}

describe("the preflight's model check", () => {
  it("passes the demo with its scripted models, noting each role's URI", async () => {
    const r = await preflight(subject());
    expect(r.ok).toBe(true);
    expect(r.checks.map((c) => [c.name, c.ok])).toEqual([
      ["models", true],
      ["mcp-servers", true],
      ["definitions", true],
    ]);
    expect(r.checks[0]?.notes).toContain(`reviewer: ${demoModels.reviewer}`);
  });

  it("refuses a role the pack names without a model: model/missing, a usage error", async () => {
    const { summarizer: _, ...two } = demoModels;
    expect(await codes(subject({ models: two }))).toEqual([
      ["models", "model/missing", "/models/summarizer", true],
    ]);
    const r = await preflight(subject({ models: two }));
    expect(r.usage).toBe(true);
    expect(r.problems[0]?.message).toBe("no model for summarizer: pass --model summarizer=URI");
  });

  it("refuses URIs that do not parse, and one with credentials without showing them", async () => {
    const models = {
      ...demoModels,
      reviewer: "gemini:pro",
      summarizer: `openai-compatible:http://user:${KEY}@127.0.0.1:1/v1#m`,
    };
    const r = await preflight(subject({ models }));
    expect(r.problems.map((p) => [p.code, p.usage])).toEqual([
      ["model/uri", true],
      ["model/credential", true],
    ]);
    expect(JSON.stringify(r)).not.toContain(KEY);
  });

  it("refuses openai: and anthropic: without their keys, never printing a key that is set", async () => {
    const models = { ...demoModels, reviewer: "openai:gpt-4.1", summarizer: "anthropic:claude-x" };
    expect(await codes(subject({ models }))).toEqual([
      ["models", "model/missing-key", "/models/reviewer", true],
      ["models", "model/missing-key", "/models/summarizer", true],
    ]);
    // An empty variable is no key.
    const empty = await preflight(
      subject({ models, env: { OPENAI_API_KEY: "", ANTHROPIC_API_KEY: KEY } }),
    );
    expect(empty.problems.map((p) => p.message)).toEqual([
      "reviewer's openai: needs OPENAI_API_KEY in the environment",
    ]);
    const both = await preflight(
      subject({ models, env: { OPENAI_API_KEY: KEY, ANTHROPIC_API_KEY: KEY } }),
    );
    expect(both.ok).toBe(true);
    expect(JSON.stringify(both)).not.toContain(KEY);
  });

  it("refuses a base URL in the environment that is malformed or carries credentials", async () => {
    const models = { ...demoModels, reviewer: "openai:gpt-4.1", summarizer: "anthropic:claude-x" };
    const env = {
      OPENAI_API_KEY: KEY,
      ANTHROPIC_API_KEY: KEY,
      OPENAI_BASE_URL: "not a url",
      ANTHROPIC_BASE_URL: `https://u:${KEY}@proxy.example/`,
    };
    const r = await preflight(subject({ models, env }));
    expect(r.problems.map((p) => [p.code, p.message])).toEqual([
      ["model/uri", "OPENAI_BASE_URL does not parse as a URL"],
      [
        "model/uri",
        "ANTHROPIC_BASE_URL carries user-info or a query (credentials belong in the key variable)",
      ],
    ]);
    expect(JSON.stringify(r)).not.toContain(KEY);
  });

  it("refuses a scripted file that is missing or not a regular file (usage), or bad at a line (invalid)", async () => {
    const fifo = path.join(dir, "answers.fifo");
    execFileSync("mkfifo", [fifo]);
    const bad = write("bad.jsonl", '{"kind":"message"}\n\n[1,2]\n');
    const notJson = write("not-json.jsonl", '"fine"\n{"kind":\n');
    const empty = write("empty.jsonl", "\n\n");
    const r = await preflight(
      subject({
        models: {
          implementer: `scripted:${path.join(dir, "nope.jsonl")}`,
          reviewer: `scripted:${fifo}`,
          summarizer: `scripted:${bad}`,
        },
      }),
    );
    expect(r.problems.map((p) => [p.code, p.usage, p.detail?.reason])).toEqual([
      ["model/script", true, "missing"],
      ["model/script", true, "not-regular-file"],
      ["model/script", false, "line"],
    ]);
    expect(r.problems[2]?.message).toContain("script line 3 is neither a string nor an object");
    const more = await preflight(
      subject({
        models: { ...demoModels, reviewer: `scripted:${notJson}`, summarizer: `scripted:${empty}` },
      }),
    );
    expect(more.problems.map((p) => p.message)).toEqual([
      expect.stringContaining("script line 2 is not JSON"),
      expect.stringContaining("has no answer"),
    ]);
    expect(more.usage).toBe(false);
  });

  it("refuses a scripted file over 64 MiB without reading it (invalid)", async () => {
    const big = path.join(dir, "big.jsonl");
    writeFileSync(big, "");
    truncateSync(big, 64 * 1024 * 1024 + 1);
    const r = await preflight(subject({ models: { ...demoModels, reviewer: `scripted:${big}` } }));
    expect(r.problems.map((p) => [p.code, p.usage, p.detail?.reason])).toEqual([
      ["model/script", false, "too-large"],
    ]);
  });

  it("accepts openai-compatible without a key, and notes that a key that is set goes to that server", async () => {
    const models = { ...demoModels, reviewer: "openai-compatible:http://127.0.0.1:8080/v1#qwen" };
    expect((await preflight(subject({ models }))).ok).toBe(true);
    const r = await preflight(subject({ models, env: { OPENAI_API_KEY: KEY } }));
    expect(r.checks[0]?.notes).toContain(
      "OPENAI_API_KEY is set: it is sent to the openai-compatible base URL",
    );
    expect(JSON.stringify(r)).not.toContain(KEY);
  });

  it("notes a model given for a role the pack does not name", async () => {
    const r = await preflight(
      subject({ models: { ...demoModels, "adversarial-critic": demoModels.reviewer } }),
    );
    expect(r.ok).toBe(true);
    expect(r.checks[0]?.notes).toContain(
      "adversarial-critic: the pack names no adversarial-critic; its model is not used",
    );
  });
});

describe("the preflight's MCP server check", () => {
  it("finds a stdio command on PATH or as a path from the definition's folder", async () => {
    const bin = path.join(dir, "bin");
    mkdirSync(bin, { recursive: true });
    write("bin/calc-server", "#!/bin/sh\n");
    chmodSync(path.join(bin, "calc-server"), 0o755);
    const pack = withServers([
      { name: "calc", transport: "stdio", command: "node", args: ["server.mjs"] },
      { name: "local", transport: "stdio", command: "./bin/calc-server" },
      { name: "remote", transport: "streamable_http", url: "http://127.0.0.1:9/mcp" },
    ]);
    const r = await preflight(subject({ pack }));
    expect(r.ok).toBe(true);
    expect(r.checks[1]?.notes).toEqual([
      "implementer: calc (stdio)",
      "implementer: local (stdio)",
      "implementer: remote (streamable_http)",
    ]);
  });

  it("refuses a command that is not there, not executable, or declared without a URL", async () => {
    write("not-executable", "#!/bin/sh\n");
    const pack = withServers([
      { name: "gone", transport: "stdio", command: "warrant-no-such-server" },
      { name: "plain", transport: "stdio", command: "./not-executable" },
      { name: "web", transport: "sse", url: "ftp://example/mcp" },
    ]);
    const r = await preflight(subject({ pack }));
    expect(r.problems.map((p) => [p.check, p.code, p.path, p.usage])).toEqual([
      ["mcp-servers", "tool/mcp-unavailable", "/agents/implementer/mcpServers/0", false],
      ["mcp-servers", "tool/mcp-unavailable", "/agents/implementer/mcpServers/1", false],
      ["mcp-servers", "tool/mcp-unavailable", "/agents/implementer/mcpServers/2", false],
    ]);
    expect(r.problems[0]?.message).toContain(
      'command "warrant-no-such-server" is not an executable file on PATH',
    );
    expect(r.problems[1]?.message).toContain(`(from ${dir})`);
    // An empty PATH finds nothing.
    const none = await preflight(
      subject({ pack: withServers([{ name: "n", transport: "stdio", command: "node" }]), env: {} }),
    );
    expect(none.problems.map((p) => p.code)).toEqual(["tool/mcp-unavailable"]);
  });
});

describe("the preflight's list of checks", () => {
  it("takes a check another module adds, and reports one that throws without stopping", async () => {
    const extra: PreflightCheck = {
      name: "skills",
      run: async () => ({
        problems: [{ code: "definition/skill-missing", path: "/skills/0", message: "no skill" }],
      }),
    };
    const broken: PreflightCheck = {
      name: "broken",
      run: async () => {
        throw new Error("boom");
      },
    };
    const r = await preflight(subject(), [...PREFLIGHT_CHECKS, extra, broken]);
    expect(r.checks.map((c) => [c.name, c.ok])).toEqual([
      ["models", true],
      ["mcp-servers", true],
      ["definitions", true],
      ["skills", false],
      ["broken", false],
    ]);
    expect(r.problems.map((p) => [p.check, p.code, p.usage])).toEqual([
      ["skills", "definition/skill-missing", false],
      ["broken", "runtime/preflight-check", false],
    ]);
    expect(r.usage).toBe(false);
  });
});

/** A server whose every answer is `answer(req)` (status, headers, body), recording what it got. */
async function server(
  answer: (req: { method: string; url: string }) => {
    status: number;
    headers?: Record<string, string>;
    body?: string;
    stall?: boolean;
  },
): Promise<{
  url: string;
  seen: { method: string; url: string; headers: Record<string, unknown> }[];
  close(): Promise<void>;
}> {
  const seen: { method: string; url: string; headers: Record<string, unknown> }[] = [];
  const s: Server = createServer((req, res) => {
    seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers });
    const a = answer({ method: req.method ?? "", url: req.url ?? "" });
    if (a.stall === true) return; // never answers
    res.writeHead(a.status, { "content-type": "application/json", ...a.headers });
    res.end(a.body ?? "{}");
  });
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const { port } = s.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((r) => {
        s.closeAllConnections();
        s.close(() => r());
      }),
  };
}

describe("the probe of live endpoints (opt-in)", () => {
  it("is not run unless asked, and skips scripted models", async () => {
    expect((await preflight(subject())).checks.map((c) => c.name)).not.toContain("probe");
    const r = await preflight(subject({ probe: true }));
    expect(r.checks.at(-1)).toEqual({ name: "probe", ok: true, notes: [] });
  });

  it("GETs the model list of an openai-compatible server with the key, and says whether it lists the model", async () => {
    const wire = await startWireServer([
      { status: 200, body: { object: "list", data: [{ id: "local-model" }, { id: "other" }] } },
      { status: 200, body: { object: "list", data: [{ id: "other" }] } },
    ]);
    try {
      const models = {
        ...demoModels,
        implementer: `openai-compatible:${wire.url}/v1#local-model`,
        reviewer: `openai-compatible:${wire.url}/v1/#local-model`,
      };
      const r = await preflight(subject({ models, env: { OPENAI_API_KEY: KEY }, probe: true }));
      expect(r.ok).toBe(true);
      expect(wire.requests.map((q) => [q.method, q.path])).toEqual([
        ["GET", "/v1/models"],
        ["GET", "/v1/models"],
      ]);
      expect(wire.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(r.checks.at(-1)?.notes).toEqual([
        `implementer: ${wire.url}/v1 answered GET /models; it lists local-model`,
        `reviewer: ${wire.url}/v1 answered GET /models; its list does not name local-model`,
      ]);
      expect(JSON.stringify(r)).not.toContain(KEY);
    } finally {
      await wire.close();
    }
  });

  it("falls back to a one-token call where the server has no model list", async () => {
    const wire = await startWireServer([
      { status: 404, body: { error: "no route" } },
      { status: 200, body: { id: "chatcmpl-1", choices: [] } },
    ]);
    try {
      const models = { ...demoModels, implementer: `openai-compatible:${wire.url}/v1#m` };
      const r = await preflight(subject({ models, probe: true }));
      expect(r.ok).toBe(true);
      expect(wire.requests.map((q) => [q.method, q.path])).toEqual([
        ["GET", "/v1/models"],
        ["POST", "/v1/chat/completions"],
      ]);
      expect(wire.requests[1]?.body).toEqual({
        model: "m",
        max_tokens: 1,
        messages: [{ role: "user", content: "ping" }],
      });
      // No key set: none is sent.
      expect(wire.requests[0]?.headers.authorization).toBeUndefined();
      expect(r.checks.at(-1)?.notes).toEqual([
        `implementer: ${wire.url}/v1 answered a one-token call`,
      ]);
    } finally {
      await wire.close();
    }
  });

  it("probes openai: at OPENAI_BASE_URL and anthropic: at /v1/models with its headers", async () => {
    const wire = await startWireServer([
      { status: 200, body: { data: [{ id: "gpt-4.1" }] } },
      { status: 200, body: { data: [{ id: "claude-x" }] } },
    ]);
    try {
      const models = {
        ...demoModels,
        implementer: "openai:gpt-4.1",
        reviewer: "anthropic:claude-x",
      };
      const env = {
        OPENAI_API_KEY: KEY,
        OPENAI_BASE_URL: `${wire.url}/v1`,
        ANTHROPIC_API_KEY: `${KEY}-a`,
        ANTHROPIC_BASE_URL: wire.url,
      };
      const r = await preflight(subject({ models, env, probe: true }));
      expect(r.ok).toBe(true);
      expect(wire.requests.map((q) => q.path)).toEqual(["/v1/models", "/v1/models"]);
      expect(wire.requests[1]?.headers["x-api-key"]).toBe(`${KEY}-a`);
      expect(wire.requests[1]?.headers["anthropic-version"]).toBe("2023-06-01");
      expect(wire.requests[1]?.headers.authorization).toBeUndefined();
    } finally {
      await wire.close();
    }
  });

  it("refuses a refused key (model/auth), a server error, a redirect it does not follow, silence and no server", async () => {
    const refusing = await startWireServer([
      { status: 401, body: { error: { message: `Incorrect API key provided: ${KEY}` } } },
      { status: 503, body: {} },
    ]);
    const redirecting = await server(() => ({
      status: 302,
      headers: { location: "/steal" },
    }));
    const silent = await server(() => ({ status: 200, stall: true }));
    try {
      const base = (url: string) => `openai-compatible:${url}/v1#m`;
      const r = await preflight(
        subject({
          models: {
            implementer: base(refusing.url),
            reviewer: base(refusing.url),
            summarizer: base(redirecting.url),
          },
          env: { OPENAI_API_KEY: KEY },
          probe: true,
        }),
      );
      expect(r.problems.map((p) => [p.check, p.code, p.usage])).toEqual([
        ["probe", "model/auth", false],
        ["probe", "model/unavailable", false],
        ["probe", "model/unreachable", false],
      ]);
      expect(redirecting.seen).toHaveLength(1);
      expect(JSON.stringify(r)).not.toContain(KEY);
      const closed = await server(() => ({ status: 200 }));
      await closed.close();
      const t = await preflight(
        subject({
          models: { ...demoModels, implementer: base(silent.url), reviewer: base(closed.url) },
          probe: true,
          probeTimeoutMs: 300,
        }),
      );
      expect(t.problems.map((p) => [p.code, p.message])).toEqual([
        ["model/timeout", `implementer: ${silent.url}/v1 did not answer within 300 ms`],
        [
          "model/unreachable",
          expect.stringContaining(`reviewer: ${closed.url}/v1 cannot be reached`),
        ],
      ]);
    } finally {
      await Promise.all([refusing.close(), redirecting.close(), silent.close()]);
    }
  });
});

describe("the preflight's definitions check", () => {
  it("checks each role's definition as it runs: an edited skill is refused there, not a usage error", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "warrant-preflight-defs-"));
    try {
      cpSync(path.join(repoRoot, "examples"), dir, { recursive: true });
      const file = path.join(dir, "fix-config/task-pack.json");
      const clean = await loadPack(file);
      if (!clean.ok) throw new Error(JSON.stringify(clean.errors));
      const r = await preflight({ pack: clean.value, models: {}, overrides: {}, env: {} });
      expect(r.checks.map((c) => [c.name, c.ok])).toEqual([
        ["models", true],
        ["mcp-servers", true],
        ["definitions", true],
      ]);
      expect(r.checks[2]?.notes.join("\n")).toContain("implementer: config-fixer agent:");
      writeFileSync(path.join(dir, "agents/skills/config-style/SKILL.md"), "edited\n");
      const edited = await loadPack(file);
      if (!edited.ok) throw new Error(JSON.stringify(edited.errors));
      const bad = await preflight({ pack: edited.value, models: {}, overrides: {}, env: {} });
      expect(bad.problems.map((p) => [p.check, p.code, p.path, p.usage])).toEqual([
        ["definitions", "definition/skill-cid-mismatch", "/agents/implementer/skills/0/cid", false],
      ]);
      expect(bad.usage).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("with the overrides apart, a role whose definition's model cannot be made is the definitions check's to say", async () => {
    const loaded = await loadPack(
      path.join(repoRoot, "test/fixtures/runtime/unknown-provider.task-pack.json"),
    );
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.errors));
    const r = await preflight({
      pack: loaded.value,
      models: {
        implementer: demoModels.implementer as string,
        summarizer: demoModels.summarizer as string,
      },
      overrides: { implementer: demoModels.implementer as string },
      env: {},
    });
    expect(r.problems.map((p) => [p.check, p.code, p.path])).toEqual([
      ["definitions", "definition/provider-unknown", "/agents/reviewer/models/0/provider"],
    ]);
  });
});
