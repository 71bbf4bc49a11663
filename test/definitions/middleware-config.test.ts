// Middleware is read from the definition's config with `{"@model": n}` references, or refused:
// each refusal breaks one rule of one middleware.
import { describe, expect, it } from "vitest";
import { middlewareSpec, middlewareSpecs } from "../../src/core/definition/middleware-config.js";

const at = "/middleware/0";
const spec = (name: string, config?: Record<string, unknown>, models = 2) =>
  middlewareSpec({ name, ...(config === undefined ? {} : { config }) }, models, at);
const codeOf = (r: ReturnType<typeof spec>) =>
  r.ok ? "ok" : `${r.errors[0]?.code} ${r.errors[0]?.path}`;

describe("middleware config", () => {
  it("reads model-fallback, call-limit and history-summary", () => {
    expect(spec("model-fallback", { model: { "@model": 1 } })).toEqual({
      ok: true,
      value: {
        name: "model-fallback",
        models: [1],
        on: ["unreachable", "unavailable", "timeout", "refusal", "truncation"],
      },
    });
    expect(
      spec("model-fallback", { models: [{ "@model": 1 }, { "@model": 0 }], on: ["refusal"] }),
    ).toMatchObject({
      ok: true,
      value: { models: [1, 0], on: ["refusal"] },
    });
    expect(spec("call-limit", { maxCalls: 3 })).toEqual({
      ok: true,
      value: { name: "call-limit", maxCalls: 3 },
    });
    expect(spec("history-summary", { model: { "@model": 0 }, thresholdTokens: 100 })).toEqual({
      ok: true,
      value: { name: "history-summary", model: 0, thresholdTokens: 100, keepTurns: 2 },
    });
  });

  it("refuses a name it does not run", () => {
    expect(codeOf(spec("pii-redaction"))).toBe(
      "definition/middleware-unsupported /middleware/0/name",
    );
  });

  it("refuses each config it does not read", () => {
    const bad = "definition/middleware-config /middleware/0/config";
    expect(codeOf(spec("model-fallback"))).toBe(bad);
    expect(codeOf(spec("model-fallback", { model: { "@model": 2 } }))).toBe(bad);
    expect(codeOf(spec("model-fallback", { model: 1 }))).toBe(bad);
    expect(codeOf(spec("model-fallback", { model: { "@model": 1 }, models: [] }))).toBe(bad);
    expect(codeOf(spec("model-fallback", { model: { "@model": 1 }, on: ["error"] }))).toBe(bad);
    expect(codeOf(spec("model-fallback", { model: { "@model": 1 }, retries: 2 }))).toBe(bad);
    expect(codeOf(spec("call-limit", {}))).toBe(bad);
    expect(codeOf(spec("call-limit", { maxCalls: 1.5 }))).toBe(bad);
    expect(codeOf(spec("history-summary", { thresholdTokens: 10 }))).toBe(bad);
    expect(codeOf(spec("history-summary", { model: { "@model": 0 }, thresholdTokens: 0 }))).toBe(
      bad,
    );
    expect(
      codeOf(spec("history-summary", { model: { "@model": 0 }, thresholdTokens: 9, keepTurns: 0 })),
    ).toBe(bad);
  });

  it("reports every middleware's problems at its own pointer", () => {
    const r = middlewareSpecs(
      [{ name: "call-limit", config: { maxCalls: 1 } }, { name: "x" }, { name: "y" }],
      1,
      "/subAgents/0",
    );
    expect(r.ok ? [] : r.errors.map((e) => e.path)).toEqual([
      "/subAgents/0/middleware/1/name",
      "/subAgents/0/middleware/2/name",
    ]);
  });
});
