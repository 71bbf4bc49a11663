// validateTurn, each check deciding alone: where a JSON error is, which allow-list of message types
// applies, what a paper_ref hook must answer, and exactly what an accepted or refused turn carries.
import { describe, expect, it } from "vitest";
import type { Problem, Result } from "../../src/core/result.js";
import type { ValidTurn } from "../../src/core/turn/types.js";
import { validateTurn } from "../../src/core/turn/validate-turn.js";
import { callTurn, messageTurn, PAYLOADS, registry } from "./fixtures.js";

const tools = registry();

function errorsOf(r: Result<ValidTurn>): readonly Problem[] {
  if (r.ok) throw new Error("expected the turn to be refused");
  return r.errors;
}

describe("turn/json", () => {
  it("names the line and column of the error", () => {
    const [e] = errorsOf(validateTurn('{\n  "kind": "message",\n  oops\n}', { registry: tools }));
    expect(e).toMatchObject({ code: "turn/json", path: "", line: 3, column: 3 });
    const [first] = errorsOf(validateTurn("{", { registry: tools }));
    expect(first).toMatchObject({ code: "turn/json", line: 1, column: 2 });
  });

  it("has no line or column when the parser names no position", () => {
    const errs = errorsOf(validateTurn("", { registry: tools }));
    expect(errs).toHaveLength(1);
    expect(errs[0]?.code).toBe("turn/json");
    expect(errs[0]).not.toHaveProperty("line");
    expect(errs[0]).not.toHaveProperty("column");
    expect(errs[0]?.message).toContain("Unexpected end of JSON input");
  });
});

describe("turn/schema", () => {
  it("carries the keyword, the schema path and the params of each violation", () => {
    const turn = { ...callTurn([{ name: "workspace.read_file", args: { path: "a" } }]), extra: 1 };
    const errs = errorsOf(validateTurn(turn, { registry: tools }));
    expect(errs).toEqual([
      {
        code: "turn/schema",
        path: "",
        message: expect.stringContaining("extra"),
        detail: {
          keyword: "additionalProperties",
          schemaPath: expect.any(String),
          params: { additionalProperty: "extra" },
        },
      },
    ]);
  });
});

describe("turn/kind-mismatch", () => {
  it("a tool_calls turn with no call and a message has both problems", () => {
    const turn = {
      ...callTurn([]),
      message: (messageTurn("Finding", PAYLOADS.Finding) as { message: unknown }).message,
    };
    expect(errorsOf(validateTurn(turn, { registry: tools })).map((e) => e.path)).toEqual([
      "/tool_calls",
      "/message",
    ]);
  });

  it("a message turn with no message and a call has both problems", () => {
    const turn = {
      ...messageTurn("Finding", PAYLOADS.Finding),
      message: null,
      tool_calls: [{ name: "workspace.read_file", arguments_json: '{"path":"a"}' }],
    };
    expect(errorsOf(validateTurn(turn, { registry: tools })).map((e) => [e.code, e.path])).toEqual([
      ["turn/kind-mismatch", "/message"],
      ["turn/kind-mismatch", "/tool_calls"],
    ]);
  });
});

describe("arguments", () => {
  it("not JSON: the reason and the tool in the detail", () => {
    const errs = errorsOf(
      validateTurn(callTurn([{ name: "workspace.read_file", args: "{" }]), { registry: tools }),
    );
    expect(errs).toEqual([
      {
        code: "turn/arguments-not-object",
        path: "/tool_calls/0/arguments_json",
        message: expect.stringContaining("workspace.read_file"),
        detail: { reason: "json", subject: "workspace.read_file" },
      },
    ]);
  });

  it("a boolean: the type named in the detail", () => {
    const errs = errorsOf(
      validateTurn(callTurn([{ name: "workspace.read_file", args: "true" }]), { registry: tools }),
    );
    expect(errs).toEqual([
      {
        code: "turn/arguments-not-object",
        path: "/tool_calls/0/arguments_json",
        message: expect.stringContaining("boolean"),
        detail: { reason: "type", type: "boolean", subject: "workspace.read_file" },
      },
    ]);
  });

  it("invalid: each Ajv error with the tool, its path inside the arguments, keyword, schema path and params", () => {
    const errs = errorsOf(
      validateTurn(callTurn([{ name: "workspace.read_file", args: { path: "" } }]), {
        registry: tools,
      }),
    );
    expect(errs).toEqual([
      {
        code: "turn/arguments-invalid",
        path: "/tool_calls/0/arguments_json",
        message: expect.stringMatching(/^arguments of workspace\.read_file: /),
        detail: {
          subject: "workspace.read_file",
          instancePath: "/path",
          keyword: "minLength",
          schemaPath: expect.any(String),
          params: { limit: 1 },
        },
      },
    ]);
  });

  it("a refused call is not among the calls; the others are checked on their own", () => {
    const errs = errorsOf(
      validateTurn(
        callTurn([
          { name: "workspace.read_file", args: "[]" },
          { name: "workspace.read_file", args: { path: "a" } },
          { name: "workspace.write_file", args: { path: "a" } },
        ]),
        { registry: tools },
      ),
    );
    expect(errs.map((e) => [e.code, e.path])).toEqual([
      ["turn/arguments-not-object", "/tool_calls/0/arguments_json"],
      ["turn/arguments-invalid", "/tool_calls/2/arguments_json"],
    ]);
  });
});

describe("message types", () => {
  it("a passage's own list replaces its role's, both ways", () => {
    const ctx = {
      registry: tools,
      role: "implementer" as const,
      messageTypes: ["Finding"] as const,
    };
    expect(validateTurn(messageTurn("Finding", PAYLOADS.Finding), ctx).ok).toBe(true);
    // Plan is the implementer's, but not this passage's.
    const errs = errorsOf(validateTurn(messageTurn("Plan", PAYLOADS.Plan), ctx));
    expect(errs.map((e) => [e.code, e.path])).toEqual([["turn/type-not-allowed", "/message/type"]]);
    expect(errs[0]?.message).toContain("this passage");
    // A list that the role does not have: the summarizer may emit Result only.
    const sub = {
      registry: tools,
      role: "summarizer" as const,
      messageTypes: ["DeadEnd"] as const,
    };
    expect(validateTurn(messageTurn("DeadEnd", PAYLOADS.DeadEnd), sub).ok).toBe(true);
    // Without a role, the passage's list still applies.
    const alone = { registry: tools, messageTypes: ["DeadEnd"] as const };
    expect(validateTurn(messageTurn("Finding", PAYLOADS.Finding), alone).ok).toBe(false);
  });

  it("a role refusal names the role", () => {
    const errs = errorsOf(
      validateTurn(messageTurn("Plan", PAYLOADS.Plan), { registry: tools, role: "reviewer" }),
    );
    expect(errs[0]?.message).toContain("role reviewer");
  });
});

describe("payload", () => {
  it("not JSON: the reason and the message type in the detail", () => {
    expect(errorsOf(validateTurn(messageTurn("Plan", "{"), { registry: tools }))).toEqual([
      {
        code: "turn/payload-invalid",
        path: "/message/payload_json",
        message: expect.stringContaining("Plan"),
        detail: { reason: "json", subject: "Plan" },
      },
    ]);
  });

  it("invalid: the Ajv error with the message type and its path inside the payload", () => {
    const errs = errorsOf(
      validateTurn(messageTurn("Finding", { ...PAYLOADS.Finding, severity: "x" }), {
        registry: tools,
      }),
    );
    expect(errs).toHaveLength(1);
    expect(errs[0]).toMatchObject({
      code: "turn/payload-invalid",
      path: "/message/payload_json",
      detail: { subject: "Finding", instancePath: "/severity" },
    });
    expect(errs[0]?.message).toMatch(/^the Finding payload: /);
  });
});

describe("paper_ref", () => {
  it("resolves only when the hook answers exactly true", () => {
    const turn = messageTurn("Finding", PAYLOADS.Finding, "workspace:a.txt");
    for (const answer of [1, "yes", {}, undefined])
      expect(
        errorsOf(
          validateTurn(turn, { registry: tools, resolvePaperRef: () => answer as boolean }),
        ).map((e) => [e.code, e.path]),
      ).toEqual([["turn/paper-ref-unresolved", "/message/paper_ref"]]);
    expect(validateTurn(turn, { registry: tools, resolvePaperRef: () => true }).ok).toBe(true);
  });

  it("is not checked without a hook, nor when it is null", () => {
    const turn = messageTurn("Finding", PAYLOADS.Finding, "workspace:a.txt");
    expect(validateTurn(turn, { registry: tools }).ok).toBe(true);
    let asked = 0;
    const hook = () => {
      asked++;
      return false;
    };
    const none = messageTurn("Finding", PAYLOADS.Finding, null);
    expect(validateTurn(none, { registry: tools, resolvePaperRef: hook }).ok).toBe(true);
    expect(asked).toBe(0);
  });
});

describe("an accepted turn", () => {
  it("a tool-call turn carries the turn and its calls, and no message key", () => {
    const turn = callTurn([{ name: "workspace.read_file", args: { path: "a" } }]);
    const r = validateTurn(turn, { registry: tools });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(Object.keys(r.value).sort()).toEqual(["calls", "turn"]);
    expect(r.value.turn).toEqual(turn);
  });

  it("a message turn carries the parsed payload and the paper_ref", () => {
    const r = validateTurn(JSON.stringify(messageTurn("Finding", PAYLOADS.Finding, "x:y")), {
      registry: tools,
      role: "reviewer",
    });
    expect(r).toMatchObject({
      ok: true,
      value: {
        calls: [],
        message: { type: "Finding", payload: PAYLOADS.Finding, paperRef: "x:y" },
      },
    });
  });
});
