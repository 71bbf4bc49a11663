// The ToolHost port (what runs a registered tool) and a composite host that merges several hosts.
// Contract of a ToolResult: `ok: true` — the tool ran and `content` is its answer (`isError` true
// when the tool itself reported a failure the model may read and act on); `ok: false` — the host
// got no answer from the tool (refused path, unknown tool, time limit, server gone): `isError` is
// true and `code` says why. A host never rejects for these: a rejected promise is a bug.
import { fail, ok, type Problem, pointer, type Result } from "../result.js";
import { createToolRegistry, type ToolRegistry, type ToolSpec } from "../turn/tool-registry.js";

/** The version of the tool host port. */
export const TOOL_HOST_PORT_VERSION = "v1";

export interface ToolResult {
  readonly ok: boolean;
  readonly content: string;
  readonly isError: boolean;
  readonly code?: string;
}

export interface ToolCallOptions {
  readonly signal?: AbortSignal;
  /** A time limit for this call; the host's own default applies when absent. */
  readonly timeoutMs?: number;
}

export interface ToolHost {
  specs(): readonly ToolSpec[];
  call(name: string, args: Record<string, unknown>, opts?: ToolCallOptions): Promise<ToolResult>;
  /** Releases what the host holds (processes, connections); idempotent. */
  close?(): Promise<void>;
}

/** A failed call: the host got no answer from the tool. */
export function toolFailure(code: string, content: string): ToolResult {
  return { ok: false, isError: true, code, content };
}

/** A completed call, possibly reporting a tool-side error. */
export function toolAnswer(content: string, isError = false): ToolResult {
  return { ok: true, isError, content };
}

/** The registry of a host's tools (compiled input schemas), for validating turns. */
export function registryOf(host: ToolHost): Result<ToolRegistry> {
  return createToolRegistry(host.specs());
}

/**
 * One host over several: calls are routed by tool name; a name offered by two hosts is refused
 * (`tool/duplicate-name`, path `/<host index>/<tool index>`); closing closes every host.
 */
export function createCompositeToolHost(hosts: readonly ToolHost[]): Result<ToolHost> {
  const owner = new Map<string, ToolHost>();
  const specs: ToolSpec[] = [];
  const errors: Problem[] = [];
  hosts.forEach((host, h) => {
    host.specs().forEach((spec, t) => {
      if (owner.has(spec.name)) {
        errors.push({
          code: "tool/duplicate-name",
          path: pointer(h, t),
          message: `tool ${spec.name} is offered by two hosts`,
        });
        return;
      }
      owner.set(spec.name, host);
      specs.push(spec);
    });
  });
  if (errors.length > 0) return fail(errors);
  return ok({
    specs: () => specs,
    call: (name, args, opts) => {
      const host = owner.get(name);
      if (host === undefined) {
        return Promise.resolve(toolFailure("tool/unknown", `no tool named ${name}`));
      }
      return host.call(name, args, opts);
    },
    close: async () => {
      await Promise.all(hosts.map((h) => h.close?.()));
    },
  });
}
