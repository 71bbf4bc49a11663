// MCP tool names mapped into the registry's name pattern: kept when valid, folded and suffixed otherwise.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { mcpToolName, serverSegment } from "../../src/core/turn/tool-names.js";
import { TOOL_NAME_PATTERN } from "../../src/core/turn/tool-registry.js";

describe("mcpToolName", () => {
  it("keeps names already inside the pattern", () => {
    expect(mcpToolName("files", "read_file")).toBe("files.read_file");
    expect(mcpToolName("everything", "get-sum")).toBe("everything.get-sum");
    expect(mcpToolName("a1", "v2.list")).toBe("a1.v2.list");
  });

  it("folds other names and suffixes a digest of the original", () => {
    expect(mcpToolName("files", "getThing")).toMatch(/^files\.getthing-[0-9a-f]{8}$/);
    expect(serverSegment("My Server.v2")).toMatch(/^my-server-v2-[0-9a-f]{8}$/);
    expect(serverSegment("1st")).toMatch(/^s-1st-[0-9a-f]{8}$/);
    expect(mcpToolName("files", "getThing")).not.toBe(mcpToolName("files", "GetThing"));
  });

  it("always lands inside the pattern, with the server part free of dots", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.string({ minLength: 1 }), (server, tool) => {
        const name = mcpToolName(server, tool);
        expect(name).toMatch(TOOL_NAME_PATTERN);
        expect(name.slice(0, name.indexOf("."))).toBe(serverSegment(server));
      }),
    );
  });

  it("keeps distinct originals distinct", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.string({ minLength: 1 }), (a, b) => {
        fc.pre(a !== b);
        expect(mcpToolName("s", a)).not.toBe(mcpToolName("s", b));
      }),
    );
  });
});
