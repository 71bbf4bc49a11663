// The task pack's observation command profiles as passage tools (docs/spec/turns.md): `profile.<name>`, input
// schema the profile's `args` schema. Each call runs in a fresh contained environment over the
// baseline (pinned once, at the first call, for as long as the host is open), under the profile's
// time, output and process limits, and that environment is destroyed before the call answers, so
// no call sees another's writes and the baseline never changes. Mutation profiles are never offered. Without a Sandbox there is no host at all: a
// passage never runs a command uncontained.
import type { Baseline, ResourceLimits, Sandbox } from "../../core/ports/sandbox.js";
import {
  type ToolCallOptions,
  type ToolHost,
  type ToolResult,
  toolAnswer,
  toolFailure,
} from "../../core/ports/tool-host.js";
import { renderArgv } from "../../core/taskpack/argv.js";
import type { CommandProfile } from "../../core/taskpack/task-pack.js";
import type { ToolSpec } from "../../core/turn/tool-registry.js";

export const PROFILE_TOOL_PREFIX = "profile.";

export interface ProfileToolsOptions {
  /** The pack's command profiles; only those with effect `observation` become tools. */
  readonly commands: ReadonlyMap<string, CommandProfile>;
  /** The baseline each call's environment is copied from. */
  readonly baselineDir: string;
  readonly sandbox: Sandbox;
  /** Each call's environment's resource limits (the pack's; default DEFAULT_RESOURCES). */
  readonly resources?: ResourceLimits | undefined;
  /** The pack's dependency folders and toolchains, in every call's environment. */
  readonly host?:
    | { readonly dependencies: readonly string[]; readonly toolchains: readonly string[] }
    | undefined;
}

/** The tool name of a profile: `profile.<name>` (pack profile names always make a valid one). */
export function profileToolName(profileName: string): string {
  return `${PROFILE_TOOL_PREFIX}${profileName}`;
}

function describe(profile: CommandProfile): string {
  return (
    `Run \`${profile.argv.join(" ")}\` in a fresh contained copy of the workspace ` +
    "(writes are discarded after the call; {name} elements are replaced by the argument name). " +
    `Limits: ${profile.timeoutMs} ms, ${profile.maxOutputBytes} output bytes. ` +
    "Answers the exit status, whether it timed out or was cut, and stdout and stderr."
  );
}

/** The specs of the observation profiles, in the pack's order. */
export function profileToolSpecs(commands: ReadonlyMap<string, CommandProfile>): ToolSpec[] {
  const specs: ToolSpec[] = [];
  for (const profile of commands.values()) {
    if (profile.effect !== "observation") continue;
    specs.push({
      name: profileToolName(profile.name),
      description: describe(profile),
      inputSchema: profile.argsSchema,
      effect: "observation",
    });
  }
  return specs;
}

interface Ran {
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly timedOut: boolean;
  readonly truncated: boolean;
  readonly stdout: string;
  readonly stderr: string;
}

/** The text the model reads: status lines, then each stream that said anything. */
export function formatRun(argv: readonly string[], profile: CommandProfile, r: Ran): string {
  const lines = [`$ ${argv.join(" ")}`];
  lines.push(
    r.exitCode === null
      ? `exit: none (killed by ${r.signal ?? "a signal"})`
      : `exit: ${r.exitCode}`,
  );
  if (r.timedOut) lines.push(`timed out: yes, after the profile's ${profile.timeoutMs} ms`);
  if (r.truncated)
    lines.push(`truncated: yes, output past ${profile.maxOutputBytes} bytes dropped`);
  if (r.stdout !== "") lines.push("--- stdout", r.stdout.replace(/\n$/, ""));
  if (r.stderr !== "") lines.push("--- stderr", r.stderr.replace(/\n$/, ""));
  if (r.stdout === "" && r.stderr === "") lines.push("(no output)");
  return lines.join("\n");
}

/**
 * A host over the pack's observation profiles. A call's arguments are checked against the
 * profile's schema before any environment is made (`tool/arguments-invalid`). A command that exits
 * non-zero is an answer with `isError`; one that passes its time limit is `tool/timeout` and one
 * cancelled is `tool/aborted`, both carrying what it printed; a sandbox that fails is `tool/sandbox`.
 */
export function createProfileTools(opts: ProfileToolsOptions): ToolHost {
  const specs = profileToolSpecs(opts.commands);
  const offered = new Map<string, CommandProfile>();
  let pin: Promise<Baseline> | undefined;
  const baseline = () => {
    if (pin === undefined) {
      const opening = opts.sandbox.openBaseline(opts.baselineDir, {
        dependencies: opts.host?.dependencies ?? [],
      });
      pin = opening;
      // A pin that failed is tried again at the next call.
      opening.catch(() => {
        if (pin === opening) pin = undefined;
      });
    }
    return pin;
  };
  for (const profile of opts.commands.values()) {
    if (profile.effect === "observation") offered.set(profileToolName(profile.name), profile);
  }

  async function run(
    profile: CommandProfile,
    argv: readonly string[],
    callOpts: ToolCallOptions,
  ): Promise<ToolResult> {
    const timeoutMs =
      callOpts.timeoutMs === undefined
        ? profile.timeoutMs
        : Math.min(profile.timeoutMs, callOpts.timeoutMs);
    const env = await opts.sandbox.createEnvironment(await baseline(), {
      ...(opts.resources === undefined ? {} : { resources: opts.resources }),
      ...(opts.host === undefined ? {} : { toolchains: opts.host.toolchains }),
    });
    try {
      const r = await env.exec(argv, {
        timeoutMs,
        maxOutputBytes: profile.maxOutputBytes,
        ...(profile.maxProcesses === undefined ? {} : { maxProcesses: profile.maxProcesses }),
        ...(profile.env === undefined ? {} : { env: profile.env }),
        ...(callOpts.signal === undefined ? {} : { signal: callOpts.signal }),
      });
      const text = formatRun(argv, { ...profile, timeoutMs }, r);
      if (r.cancelled) return toolFailure("tool/aborted", `${text}\n(the call was cancelled)`);
      if (r.timedOut) return toolFailure("tool/timeout", text);
      if (r.limit !== undefined)
        return toolFailure(
          "environment/limit",
          `${text}\n(stopped at the ${r.limit.resource} limit of ${r.limit.bytes} bytes)`,
        );
      return toolAnswer(text, r.exitCode !== 0);
    } finally {
      await env.destroy();
    }
  }

  return {
    specs: () => specs,
    async call(
      name: string,
      args: Record<string, unknown>,
      callOpts: ToolCallOptions = {},
    ): Promise<ToolResult> {
      const profile = offered.get(name);
      if (profile === undefined)
        return toolFailure("tool/unknown", `no observation command profile tool named ${name}`);
      const valid = profile.validateArgs(args);
      if (!valid.ok) {
        const why = valid.errors.map((p) => p.message).join("; ");
        return toolFailure("tool/arguments-invalid", `${name}: ${why}`);
      }
      const argv = renderArgv(profile, valid.value);
      if (!argv.ok)
        return toolFailure(
          "tool/arguments-invalid",
          argv.errors[0]?.message ?? `${name}: bad args`,
        );
      if (callOpts.signal?.aborted === true)
        return toolFailure("tool/aborted", "the call was cancelled");
      try {
        return await run(profile, argv.value, callOpts);
      } catch (e) {
        const code = (e as { code?: unknown }).code;
        return toolFailure(
          "tool/sandbox",
          `${name}: the contained environment failed (${typeof code === "string" ? code : (e as Error).message})`,
        );
      }
    },
    async close() {
      const held = pin;
      pin = undefined;
      await held?.then((b) => b.release()).catch(() => undefined);
    },
  };
}
