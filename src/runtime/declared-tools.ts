// A definition's declared `tools[]` bound to what the passage is offered. Each declared tool must
// name an offered implementation (a pack profile `profile.<name>`, an MCP tool `<server>.<tool>`,
// a code tool, a workspace tool) whose input schema is provably no wider than the declared one;
// otherwise the definition is refused before any passage. When a definition declares tools, its
// passages are offered exactly those (with the declared description and schema, which is what its
// content ID covers) and the built-in observation tools — deny by default.
import type { Tool } from "../core/definition/types.js";
import { type ToolHost, toolFailure } from "../core/ports/tool-host.js";
import { fail, ok, type Problem, type Result } from "../core/result.js";
import { noWider } from "../core/turn/schema-narrower.js";
import type { ToolSpec } from "../core/turn/tool-registry.js";

/** A declared tool and the offered implementation it binds to. */
export interface ToolBinding {
  readonly declared: Tool;
  readonly spec: ToolSpec;
}

/** Names of tools every passage keeps when its definition declares tools. */
export type BuiltIn = (name: string) => boolean;

/** Each declared tool bound, or every declared tool that cannot be. */
export function bindDeclaredTools(
  declared: readonly Tool[],
  offered: readonly ToolSpec[],
  pointer: string,
): Result<readonly ToolBinding[]> {
  const byName = new Map(offered.map((s) => [s.name, s]));
  const bindings: ToolBinding[] = [];
  const problems: Problem[] = [];
  for (const [i, tool] of declared.entries()) {
    const at = `${pointer}/tools/${i}`;
    const spec = byName.get(tool.name);
    if (spec === undefined) {
      problems.push({
        code: "definition/tool-unbound",
        path: `${at}/name`,
        message: `tool ${tool.name}: no such tool is offered here (offered: ${offered.map((s) => s.name).join(", ") || "none"})`,
      });
      continue;
    }
    if (spec.effect !== "observation") {
      problems.push({
        code: "definition/tool-unbound",
        path: `${at}/name`,
        message: `tool ${tool.name} has effects; a participant's passage gets observation tools only`,
      });
      continue;
    }
    if (!noWider(spec.inputSchema, tool.inputSchema)) {
      problems.push({
        code: "definition/tool-schema-wider",
        path: `${at}/inputSchema`,
        message: `tool ${tool.name}: the implementation accepts input the declared inputSchema does not (or it cannot be shown otherwise)`,
      });
      continue;
    }
    bindings.push({ declared: tool, spec });
  }
  return problems.length > 0 ? fail(problems) : ok(bindings);
}

/**
 * The host a passage of a definition that declares tools gets: the bound tools under their
 * declared description and schema, and the built-in ones; any other call is refused.
 */
export function declaredToolHost(
  host: ToolHost,
  bindings: readonly ToolBinding[],
  builtIn: BuiltIn,
): ToolHost {
  const declared = new Set(bindings.map((b) => b.declared.name));
  const specs: ToolSpec[] = [
    ...bindings.map(
      (b): ToolSpec => ({
        name: b.declared.name,
        description: b.declared.description,
        inputSchema: b.declared.inputSchema,
        effect: "observation",
      }),
    ),
    ...host.specs().filter((s) => builtIn(s.name) && !declared.has(s.name)),
  ];
  const allowed = new Set(specs.map((s) => s.name));
  return {
    specs: () => specs,
    call: (name, args, opts) =>
      allowed.has(name)
        ? host.call(name, args, opts)
        : Promise.resolve(toolFailure("tool/unknown", `no tool named ${name}`)),
  };
}
