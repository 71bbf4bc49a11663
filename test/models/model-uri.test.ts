// Model URIs and the factory: which provider, which key, and every refusal.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createModelFromUri, parseModelUri } from "../../src/adapters/models/model-uri.js";

describe("parseModelUri", () => {
  it.each([
    ["scripted:agents/impl.jsonl", { kind: "scripted", path: "agents/impl.jsonl" }],
    ["openai:gpt-4.1", { kind: "openai", model: "gpt-4.1", mode: "tools" }],
    ["openai:gpt-4.1?mode=json_schema", { kind: "openai", model: "gpt-4.1", mode: "json_schema" }],
    [
      "openai-compatible:http://127.0.0.1:11434/v1#llama3.1:8b",
      {
        kind: "openai-compatible",
        baseURL: "http://127.0.0.1:11434/v1",
        model: "llama3.1:8b",
        mode: "tools",
      },
    ],
    [
      "openai-compatible:https://openrouter.ai/api/v1#meta-llama/llama-3.1-70b?mode=json_schema",
      {
        kind: "openai-compatible",
        baseURL: "https://openrouter.ai/api/v1",
        model: "meta-llama/llama-3.1-70b",
        mode: "json_schema",
      },
    ],
    ["anthropic:claude-sonnet-4-5", { kind: "anthropic", model: "claude-sonnet-4-5" }],
  ])("reads %s", (uri, expected) => {
    expect(parseModelUri(uri)).toEqual({ ok: true, value: expected });
  });

  it.each([
    ["gemini:pro", "model/uri"],
    ["no-scheme", "model/uri"],
    ["scripted:", "model/uri"],
    ["openai:", "model/uri"],
    ["openai:gpt?mode=fast", "model/uri"],
    ["openai:gpt?temperature=1", "model/uri"],
    ["anthropic:", "model/uri"],
    ["anthropic:claude?mode=tools", "model/uri"],
    ["openai-compatible:http://localhost:8080/v1", "model/uri"],
    ["openai-compatible:not a url#m", "model/uri"],
    ["openai-compatible:ftp://host/v1#m", "model/uri"],
    ["openai-compatible:http://user:pw@host/v1#m", "model/credential"],
    ["openai-compatible:http://host/v1?api_key=abc#m", "model/credential"],
  ])("refuses %s with %s", (uri, code) => {
    const r = parseModelUri(uri);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors[0]?.code).toBe(code);
  });
});

describe("createModelFromUri", () => {
  const KEY = "sk-secret-value-0001";

  it("needs OPENAI_API_KEY for openai: and ANTHROPIC_API_KEY for anthropic:", () => {
    for (const uri of ["openai:gpt-4.1", "anthropic:claude-sonnet-4-5"]) {
      const r = createModelFromUri(uri, { env: {} });
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.errors[0]?.code).toBe("model/missing-key");
    }
    const empty = createModelFromUri("openai:gpt-4.1", { env: { OPENAI_API_KEY: "" } });
    expect(empty.ok).toBe(false);
  });

  it("builds providers whose ids carry no key", () => {
    const env = { OPENAI_API_KEY: KEY, ANTHROPIC_API_KEY: KEY };
    const ids = [
      "openai:gpt-4.1",
      "anthropic:claude-sonnet-4-5",
      "openai-compatible:http://127.0.0.1:8080/v1#qwen",
    ].map((uri) => {
      const r = createModelFromUri(uri, { env });
      if (!r.ok) throw new Error(JSON.stringify(r.errors));
      return r.value.id;
    });
    expect(ids).toEqual([
      "openai:gpt-4.1",
      "anthropic:claude-sonnet-4-5",
      "openai-compatible:http://127.0.0.1:8080/v1#qwen",
    ]);
    for (const id of ids) expect(id).not.toContain(KEY);
  });

  it("an OpenAI-compatible server needs no key", () => {
    expect(createModelFromUri("openai-compatible:http://127.0.0.1:8080/v1#m", { env: {} }).ok).toBe(
      true,
    );
  });

  it("loads a scripted model, and refuses a missing script with model/script", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "warrant-uri-"));
    const file = path.join(dir, "s.jsonl");
    writeFileSync(file, '"text"\n');
    const r = createModelFromUri(`scripted:${file}`, { env: {} });
    expect(r.ok && r.value.id).toBe(`scripted:${file}`);
    const missing = createModelFromUri(`scripted:${path.join(dir, "nope.jsonl")}`, { env: {} });
    expect(missing.ok).toBe(false);
    if (!missing.ok) expect(missing.errors[0]?.code).toBe("model/script");
  });
});
