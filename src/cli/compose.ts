// How the command line builds its runtime: createWarrant over the store the flags name, with the
// live view as a subscriber, the terminal as approver, the models the binding's URIs name, and the
// host's detected sandbox (said on stderr when there is none).
import path from "node:path";
import { createInterface } from "node:readline/promises";
import type { Ask, Sandbox } from "../index.js";
import { resolveStoreUri, terminalLine } from "../library/basics.js";
import type { Warrant } from "../library/create-warrant.js";
import type { WarrantOptions } from "../library/options.js";
import { uriModels } from "../library/uri-models.js";
import { err } from "./io.js";
import { createLiveView, type LineOptions, type LiveView } from "./live-view.js";
import { exitWhenOnlyTelemetryRemains } from "./telemetry-signals.js";

const systemClock = { now: () => new Date() };

/**
 * Opens the runtime over the store of `--store` (else $WARRANT_STORE, else the default). A SQLite
 * store that does not exist is refused (`store/not-found`) unless `options.createStore` allows it:
 * only the commands that drive loops create one.
 */
export async function withWarrant<T>(
  storeFlag: string | undefined,
  options: Omit<WarrantOptions, "store">,
  f: (warrant: Warrant) => Promise<T>,
): Promise<T> {
  // The runtime is loaded by the command that uses it, not by every command registered beside it.
  const { createWarrant } = await import("../library/create-warrant.js");
  const warrant = await createWarrant({
    createStore: false,
    ...options,
    store: resolveStoreUri(storeFlag),
  });
  try {
    return await f(warrant);
  } finally {
    await warrant.close();
    exitWhenOnlyTelemetryRemains(warrant);
  }
}

/** One line on stderr when the backend runs commands without its seccomp filter (and what is open). */
export async function warnWeaker(sandbox: Sandbox): Promise<void> {
  const why = await sandbox.seccomp?.();
  if (why !== undefined)
    err(
      `warrant: warning: the ${sandbox.backend} sandbox runs commands without a seccomp filter: ${why}`,
    );
}

/** The first containment backend that proves itself (bwrap, then unshare), or none, said why. */
export async function hostSandbox(): Promise<Sandbox | undefined> {
  const { detectSandbox } = await import("../index.js");
  const detected = await detectSandbox();
  if (detected.ok) {
    await warnWeaker(detected.value);
    return detected.value;
  }
  const first = detected.errors[0];
  err(
    `warrant: ${first === undefined ? "no containment backend" : `${first.code}: ${first.message}`}; every run will be refused`,
  );
  return undefined;
}

/**
 * The live view: on stdout, or on stderr when stdout carries the `--json` result; `lines` says why
 * mutations are approved without asking, and whether the store lives in this process only.
 */
export function liveView(json: boolean, tty = true, lines: LineOptions = {}): LiveView {
  const stream = json ? process.stderr : process.stdout;
  return createLiveView((t) => stream.write(t), {
    tty: tty && stream.isTTY === true,
    clock: systemClock,
    columns: () => stream.columns,
    ...lines,
  });
}

/**
 * Asks on this terminal, with the live view's status line held off the prompt's row. The prompt goes
 * where the live view goes (stderr when stdout carries the `--json` result); the step's name is the
 * plan's, so the question is one terminal-safe line.
 */
function terminalAsk(view: LiveView, output: NodeJS.WritableStream): Ask {
  return async (request, signal) => {
    view.hold();
    const rl = createInterface({ input: process.stdin, output });
    try {
      const question = terminalLine(`approve ${request.step} of ${request.run}? [y/N] `);
      const answer = await rl.question(question, {
        signal,
      });
      return /^y(es)?$/i.test(answer.trim()) ? "approve" : "deny";
    } catch {
      return undefined;
    } finally {
      rl.close();
    }
  };
}

export interface DriveFlags {
  /** Approve every mutation at once (recorded as such). */
  readonly yes: boolean;
  /** Ask at the terminal when stdin is one. */
  readonly interactive: boolean;
  /** stdout carries the `--json` result: the view and the prompt go to stderr. */
  readonly json: boolean;
  /** Where runs are contained (see sandbox-option.ts); default: detected on first use. */
  readonly sandbox?: WarrantOptions["sandbox"];
  /** Who answers the prompt (or approves with --yes): recorded with each approval. */
  readonly operator?: string;
}

/**
 * The options of a driving command: models from URIs, the host's sandbox, the view, the approver
 * and who it approves as.
 */
export function driveOptions(flags: DriveFlags, view: LiveView): Omit<WarrantOptions, "store"> {
  const approver: WarrantOptions["approver"] = flags.yes
    ? "auto"
    : flags.interactive && process.stdin.isTTY === true
      ? {
          ask: terminalAsk(view, flags.json ? process.stderr : process.stdout),
          recordedAs: "answered at the terminal",
        }
      : "wait";
  return {
    models: uriModels(process.env),
    sandbox: flags.sandbox ?? hostSandbox,
    approver,
    onEvent: (e) => view.emit(e),
    ...(flags.operator === undefined ? {} : { operator: flags.operator }),
  };
}

/** Where agent definitions' skills and namespace-scoped memory come from, per the flags. */
export function definitionOptions(o: {
  readonly skills?: readonly string[];
  readonly namespace?: string;
}): Pick<WarrantOptions, "skills" | "namespace"> {
  return {
    ...(o.skills === undefined ? {} : { skills: o.skills.map((d) => path.resolve(d)) }),
    ...(o.namespace === undefined ? {} : { namespace: o.namespace }),
  };
}
