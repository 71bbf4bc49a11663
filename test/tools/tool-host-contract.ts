// The contract every ToolHost meets (as the store and sandbox contracts are run): its specs are
// observation tools a registry accepts; a call answers with text; an unknown tool and a tool that
// fails resolve with `isError` (a failure the host met carries a `tool/…` code) and never reject;
// arguments a tool's schema refuses are refused by the registry of its specs, and a host handed
// them anyway still resolves; closing twice is harmless and a call after it still resolves.
// Each host's test file runs it with the calls that exercise that host.
import { describe, expect, it } from "vitest";
import { registryOf, type ToolHost, type ToolResult } from "../../src/core/ports/tool-host.js";
import { TOOL_NAME_PATTERN } from "../../src/core/turn/tool-registry.js";

/** A call as the contract makes it: a tool name and its arguments. */
export interface ToolCall {
  readonly name: string;
  readonly args: Record<string, unknown>;
}

export interface ToolHostSubject {
  readonly name: string;
  make(): Promise<ToolHost>;
  /** A call that answers, and text its answer contains. */
  readonly good: ToolCall & { readonly answer: string };
  /** A call whose arguments break the tool's input schema. */
  readonly badArgs: ToolCall;
  /** A call the tool itself fails (a missing file, a failing command, a throwing handler). */
  readonly failing: ToolCall;
}

/** A result of a call the host could not complete, or that the tool reported as failed. */
function expectError(r: ToolResult): void {
  expect(r.isError).toBe(true);
  expect(typeof r.content).toBe("string");
  expect(r.content.length).toBeGreaterThan(0);
  if (!r.ok) expect(r.code).toMatch(/^tool\/[a-z-]+$/);
}

export function toolHostContract(subjects: readonly ToolHostSubject[]): void {
  describe.each(subjects)("ToolHost contract: $name", (subject) => {
    async function withHost(body: (host: ToolHost) => Promise<void>): Promise<void> {
      const host = await subject.make();
      try {
        await body(host);
      } finally {
        await host.close?.();
      }
    }

    it("offers observation tools with valid names and input schemas a registry accepts", async () => {
      await withHost(async (host) => {
        const specs = host.specs();
        expect(specs.length).toBeGreaterThan(0);
        for (const s of specs) {
          expect(s.name).toMatch(TOOL_NAME_PATTERN);
          expect(s.description.trim()).not.toBe("");
          expect(s.effect).toBe("observation");
        }
        expect(registryOf(host).ok).toBe(true);
        expect(specs.map((s) => s.name)).toContain(subject.good.name);
      });
    });

    it("answers a call with its text", async () => {
      await withHost(async (host) => {
        const r = await host.call(subject.good.name, subject.good.args);
        expect(r).toMatchObject({ ok: true, isError: false });
        expect(r.content).toContain(subject.good.answer);
      });
    });

    it("resolves an unknown tool with tool/unknown, never a rejection", async () => {
      await withHost(async (host) => {
        const r = await host.call("nobody.nothing", {});
        expect(r).toMatchObject({ ok: false, isError: true, code: "tool/unknown" });
      });
    });

    it("arguments its schema refuses: a registry of its specs refuses them, the host resolves", async () => {
      await withHost(async (host) => {
        // A passage's registry checks arguments before any call reaches the host ...
        const registry = registryOf(host);
        if (!registry.ok) throw new Error(JSON.stringify(registry.errors));
        const tool = registry.value.get(subject.badArgs.name);
        expect(tool?.validate(subject.badArgs.args)).toBe(false);
        // ... and a host handed them anyway answers (an error, or whatever the tool made of
        // them), never rejects.
        const r = await host.call(subject.badArgs.name, subject.badArgs.args);
        expect(typeof r.isError).toBe("boolean");
        expect(typeof r.content).toBe("string");
      });
    });

    it("resolves a tool that fails as an error the model can read, never a rejection", async () => {
      await withHost(async (host) => {
        expectError(await host.call(subject.failing.name, subject.failing.args));
      });
    });

    it("closes twice without harm, and a call after closing still resolves", async () => {
      const host = await subject.make();
      await host.close?.();
      await host.close?.();
      const r = await host.call(subject.good.name, subject.good.args);
      expect(typeof r.isError).toBe("boolean");
    });
  });
}
