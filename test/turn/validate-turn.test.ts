// validateTurn: every rule of docs/spec/turns.md, each broken on its own, with its code and JSON Pointer.
import { describe, expect, it } from "vitest";
import { ROLES } from "../../src/core/loop/types.js";
import type { Problem, Result } from "../../src/core/result.js";
import { MESSAGE_TYPES, ROLE_MESSAGE_TYPES, type ValidTurn } from "../../src/core/turn/types.js";
import { validateTurn } from "../../src/core/turn/validate-turn.js";
import { callTurn, messageTurn, PAYLOADS, registry } from "./fixtures.js";

const tools = registry();

function errorsOf(r: Result<ValidTurn>): readonly Problem[] {
  if (r.ok) throw new Error("expected the turn to be refused");
  return r.errors;
}

function codesAndPaths(r: Result<ValidTurn>): [string, string][] {
  return errorsOf(r).map((e) => [e.code, e.path]);
}

describe("validateTurn: valid turns", () => {
  it("accepts a tool-call turn and parses the arguments", () => {
    const r = validateTurn(
      JSON.stringify(
        callTurn([
          { name: "workspace.read_file", args: { path: "a.txt" } },
          { name: "workspace.write_file", args: { path: "b", content: "x" } },
        ]),
      ),
      { registry: tools },
    );
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.calls).toEqual([
      { name: "workspace.read_file", args: { path: "a.txt" } },
      { name: "workspace.write_file", args: { path: "b", content: "x" } },
    ]);
    expect(r.value.message).toBeUndefined();
    expect(r.value.turn.kind).toBe("tool_calls");
  });

  it("accepts an already parsed value as well as JSON text", () => {
    const turn = messageTurn("Plan", PAYLOADS.Plan, "workspace:src/slugify.js");
    const r = validateTurn(turn, { registry: tools, role: "implementer" });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.calls).toEqual([]);
    expect(r.value.message).toEqual({
      type: "Plan",
      payload: PAYLOADS.Plan,
      paperRef: "workspace:src/slugify.js",
    });
  });

  it.each(ROLES.flatMap((role) => ROLE_MESSAGE_TYPES[role].map((type) => [role, type] as const)))(
    "lets %s emit %s",
    (role, type) => {
      expect(validateTurn(messageTurn(type, PAYLOADS[type]), { registry: tools, role }).ok).toBe(
        true,
      );
    },
  );

  it("allows any message type when no role is given", () => {
    for (const type of MESSAGE_TYPES) {
      expect(validateTurn(messageTurn(type, PAYLOADS[type]), { registry: tools }).ok).toBe(true);
    }
  });
});

describe("validateTurn: refusals", () => {
  it("turn/json: not JSON, with line and column", () => {
    const r = validateTurn('{\n  "kind": "message",\n  oops\n}', { registry: tools });
    const [e] = errorsOf(r);
    expect(e?.code).toBe("turn/json");
    expect(e?.path).toBe("");
    expect(e?.line).toBe(3);
    expect(e?.column).toBeGreaterThan(0);
  });

  it("turn/schema: one error per violation with its path and keyword", () => {
    const turn = {
      ...callTurn([{ name: "workspace.read_file", args: {} }]),
      extra: true,
      kind: "x",
    };
    const errs = errorsOf(validateTurn(turn, { registry: tools }));
    expect(errs.every((e) => e.code === "turn/schema")).toBe(true);
    expect(errs.map((e) => [e.path, e.detail?.keyword])).toEqual(
      expect.arrayContaining([
        ["", "additionalProperties"],
        ["/kind", "enum"],
      ]),
    );
  });

  it("turn/schema: a tool name outside the pattern, a non-object root", () => {
    expect(
      codesAndPaths(validateTurn(callTurn([{ name: "Read", args: {} }]), { registry: tools })),
    ).toEqual([["turn/schema", "/tool_calls/0/name"]]);
    expect(codesAndPaths(validateTurn("[]", { registry: tools }))).toEqual([["turn/schema", ""]]);
    expect(codesAndPaths(validateTurn(42, { registry: tools }))).toEqual([["turn/schema", ""]]);
  });

  it("turn/kind-mismatch: tool_calls with no call", () => {
    expect(codesAndPaths(validateTurn(callTurn([]), { registry: tools }))).toEqual([
      ["turn/kind-mismatch", "/tool_calls"],
    ]);
  });

  it("turn/kind-mismatch: tool_calls with a message", () => {
    const turn = {
      ...callTurn([{ name: "workspace.read_file", args: { path: "a" } }]),
      message: (messageTurn("Finding", PAYLOADS.Finding) as { message: unknown }).message,
    };
    expect(codesAndPaths(validateTurn(turn, { registry: tools }))).toEqual([
      ["turn/kind-mismatch", "/message"],
    ]);
  });

  it("turn/kind-mismatch: message with null message", () => {
    const turn = { ...messageTurn("Finding", PAYLOADS.Finding), message: null };
    expect(codesAndPaths(validateTurn(turn, { registry: tools }))).toEqual([
      ["turn/kind-mismatch", "/message"],
    ]);
  });

  it("turn/kind-mismatch: message with tool calls", () => {
    const turn = {
      ...messageTurn("Finding", PAYLOADS.Finding),
      tool_calls: [{ name: "workspace.read_file", arguments_json: '{"path":"a"}' }],
    };
    expect(codesAndPaths(validateTurn(turn, { registry: tools }))).toEqual([
      ["turn/kind-mismatch", "/tool_calls"],
    ]);
  });

  it("turn/unknown-tool: a name not registered for the passage", () => {
    const turn = callTurn([
      { name: "workspace.read_file", args: { path: "a" } },
      { name: "shell.exec", args: {} },
    ]);
    expect(codesAndPaths(validateTurn(turn, { registry: tools }))).toEqual([
      ["turn/unknown-tool", "/tool_calls/1/name"],
    ]);
    const observationOnly = tools.withEffect("observation");
    const write = callTurn([{ name: "workspace.write_file", args: { path: "a", content: "" } }]);
    expect(codesAndPaths(validateTurn(write, { registry: observationOnly }))).toEqual([
      ["turn/unknown-tool", "/tool_calls/0/name"],
    ]);
  });

  it.each([
    ["[1]", "array"],
    ['"path"', "string"],
    ["null", "null"],
    ["3", "number"],
  ])("turn/arguments-not-object: %s", (args, got) => {
    const errs = errorsOf(
      validateTurn(callTurn([{ name: "workspace.read_file", args }]), { registry: tools }),
    );
    expect(errs).toHaveLength(1);
    expect(errs[0]).toMatchObject({
      code: "turn/arguments-not-object",
      path: "/tool_calls/0/arguments_json",
      detail: { reason: "type", type: got },
    });
  });

  it("turn/arguments-not-object: arguments that are not JSON", () => {
    const errs = errorsOf(
      validateTurn(callTurn([{ name: "workspace.read_file", args: "{path:" }]), {
        registry: tools,
      }),
    );
    expect(errs).toMatchObject([
      { code: "turn/arguments-not-object", path: "/tool_calls/0/arguments_json" },
    ]);
  });

  it("turn/arguments-invalid: carries the Ajv error paths inside the arguments", () => {
    const errs = errorsOf(
      validateTurn(
        callTurn([
          { name: "workspace.read_file", args: { path: "", extra: 1 } },
          { name: "workspace.write_file", args: { path: 7 } },
        ]),
        { registry: tools },
      ),
    );
    expect(errs.every((e) => e.code === "turn/arguments-invalid")).toBe(true);
    expect(errs.map((e) => [e.path, e.detail?.instancePath, e.detail?.keyword])).toEqual(
      expect.arrayContaining([
        ["/tool_calls/0/arguments_json", "/path", "minLength"],
        ["/tool_calls/0/arguments_json", "", "additionalProperties"],
        ["/tool_calls/1/arguments_json", "/path", "type"],
        ["/tool_calls/1/arguments_json", "", "required"],
      ]),
    );
    expect(errs[0]?.message).toContain("workspace.read_file");
  });

  it("turn/payload-invalid: a payload that is not JSON", () => {
    const errs = errorsOf(validateTurn(messageTurn("Plan", "{"), { registry: tools }));
    expect(errs).toMatchObject([{ code: "turn/payload-invalid", path: "/message/payload_json" }]);
  });

  it("turn/payload-invalid: a payload that breaks its type's schema, with the path inside it", () => {
    const errs = errorsOf(
      validateTurn(messageTurn("Verdict", { decision: "accept", findings: [{ severity: "x" }] }), {
        registry: tools,
      }),
    );
    expect(errs.every((e) => e.code === "turn/payload-invalid")).toBe(true);
    expect(errs.map((e) => e.detail?.instancePath)).toContain("/findings/0/severity");
  });

  it("turn/payload-invalid: a payload of another type", () => {
    const errs = errorsOf(
      validateTurn(messageTurn("Result", PAYLOADS.DeadEnd), { registry: tools }),
    );
    expect(errs[0]?.code).toBe("turn/payload-invalid");
  });

  it.each(
    ROLES.flatMap((role) =>
      MESSAGE_TYPES.filter((t) => !ROLE_MESSAGE_TYPES[role].includes(t)).map(
        (type) => [role, type] as const,
      ),
    ),
  )("turn/type-not-allowed: %s may not emit %s", (role, type) => {
    expect(
      codesAndPaths(validateTurn(messageTurn(type, PAYLOADS[type]), { registry: tools, role })),
    ).toEqual([["turn/type-not-allowed", "/message/type"]]);
  });

  it("turn/paper-ref-unresolved: the hook refuses the ref", () => {
    const seen: string[] = [];
    const resolvePaperRef = (ref: string) => {
      seen.push(ref);
      return ref.startsWith("https:");
    };
    const bad = messageTurn("Finding", PAYLOADS.Finding, "workspace:missing.txt");
    expect(codesAndPaths(validateTurn(bad, { registry: tools, resolvePaperRef }))).toEqual([
      ["turn/paper-ref-unresolved", "/message/paper_ref"],
    ]);
    const good = messageTurn("Finding", PAYLOADS.Finding, "https://example.org/doc");
    expect(validateTurn(good, { registry: tools, resolvePaperRef }).ok).toBe(true);
    const none = messageTurn("Finding", PAYLOADS.Finding, null);
    expect(validateTurn(none, { registry: tools, resolvePaperRef }).ok).toBe(true);
    expect(seen).toEqual(["workspace:missing.txt", "https://example.org/doc"]);
  });

  it("turn/paper-ref-unresolved: a hook that throws does not resolve, and validateTurn does not throw", () => {
    const bad = messageTurn("Finding", PAYLOADS.Finding, "record:x");
    const r = validateTurn(bad, {
      registry: tools,
      resolvePaperRef: () => {
        throw new Error("io");
      },
    });
    expect(codesAndPaths(r)).toEqual([["turn/paper-ref-unresolved", "/message/paper_ref"]]);
  });

  it("reports every independent problem of a turn at once", () => {
    const turn = {
      ...messageTurn("Verdict", "{}", "workspace:x"),
      tool_calls: [{ name: "nope", arguments_json: "{}" }],
    };
    const codes = errorsOf(
      validateTurn(turn, { registry: tools, role: "summarizer", resolvePaperRef: () => false }),
    ).map((e) => e.code);
    expect(new Set(codes)).toEqual(
      new Set([
        "turn/kind-mismatch",
        "turn/unknown-tool",
        "turn/type-not-allowed",
        "turn/payload-invalid",
        "turn/paper-ref-unresolved",
      ]),
    );
  });

  it("never throws on odd inputs", () => {
    for (const input of [undefined, null, "", "null", Symbol.for("x"), () => 1, 10n, {}]) {
      expect(validateTurn(input, { registry: tools }).ok).toBe(false);
    }
  });
});
