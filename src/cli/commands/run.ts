// `warrant demo`, `run`, `resume` and `worker`: compose the store, models, sandbox, approver and
// live view, then open or resume a loop and drive it.
import { existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline/promises";
import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import { createModelFromUri, parseModelUri } from "../../adapters/models/model-uri.js";
import { createScriptedModel, parseScript } from "../../adapters/models/scripted-model.js";
import { detectSandbox } from "../../adapters/sandbox/detect-sandbox.js";
import { openStore, resolveStoreUri } from "../../adapters/store/open-store.js";
import { parseStoreUri } from "../../adapters/store/store-uri.js";
import { createWorkspaceTools } from "../../adapters/tools/workspace-tools.js";
import type { LedgerStore } from "../../core/loop/ledger-store.js";
import { ROLES, type Role } from "../../core/loop/types.js";
import type { Clock } from "../../core/ports.js";
import { WarrantError } from "../../core/result.js";
import type { Sandbox } from "../../core/sandbox/sandbox-port.js";
import {
  createAgentPassages,
  type ModelForPassage,
  type ToolsForPassage,
} from "../../runtime/agent-passages.js";
import type { DriveResult } from "../../runtime/driver.js";
import { type Ask, createApprover } from "../../runtime/hil.js";
import { hostKeyDir, loadOrCreateHostKey } from "../../runtime/host-key.js";
import { createLiveView, type LiveView } from "../../runtime/live-view.js";
import { loadTaskPack } from "../../runtime/load-pack.js";
import { LoopLedger } from "../../runtime/loop-ledger.js";
import { createPassageTools, type PassageTools } from "../../runtime/passage-tools.js";
import type { RuntimeContext } from "../../runtime/ports.js";
import { sandboxPort } from "../../runtime/sandbox-bridge.js";
import {
  bindingOf,
  driveUnderLease,
  leaseHolder,
  leaseTtlMs,
  packOf,
  startLoop,
} from "../../runtime/session.js";
import type { LoadedPack } from "../../runtime/task-pack.js";
import {
  dispatchLoop,
  type JobQueue,
  jobQueueOf,
  startWorker,
  type WorkerEvent,
} from "../../runtime/worker.js";
import { EXIT_INVALID, EXIT_OK, err, formatProblem, out, printJson, UsageError } from "../io.js";

const systemClock: Clock = { now: () => new Date() };
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The package root (where `examples/` lives), found from this file in `src/` or `dist/src/`. */
export function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, "package.json"))) {
    const up = path.dirname(dir);
    if (up === dir) throw new WarrantError("runtime/package-root", "cannot find the package root");
    dir = up;
  }
  return dir;
}

export function operatorBinding(): string {
  const user = (process.env.USER ?? "local").replace(/[^A-Za-z0-9._-]/g, "-") || "local";
  return `node-operator-binding:${user}`;
}

/** A model per role from its URI; a scripted model starts after the answers earlier passages used. */
export function modelsFor(uris: Readonly<Record<string, string>>): ModelForPassage {
  return (role: Role, priorCalls: number) => {
    const uri = uris[role];
    if (uri === undefined)
      throw new WarrantError("model/missing", `no model for ${role} (use --model ${role}=URI)`);
    const parsed = parseModelUri(uri);
    if (parsed.ok && parsed.value.kind === "scripted") {
      const answers = parseScript(readFileSync(parsed.value.path, "utf8")).slice(priorCalls);
      return createScriptedModel(answers, { id: `scripted:${path.basename(parsed.value.path)}` });
    }
    const made = createModelFromUri(uri, { env: process.env });
    if (!made.ok)
      throw new WarrantError(made.errors[0]?.code ?? "model/uri", made.errors[0]?.message ?? uri);
    return made.value;
  };
}

/** `--model ROLE=URI` flags, scripted paths made absolute so `resume` finds them from anywhere. */
export function parseModelFlags(flags: readonly string[]): Record<string, string> {
  const models: Record<string, string> = {};
  for (const flag of flags) {
    const eq = flag.indexOf("=");
    const role = flag.slice(0, eq);
    if (eq < 0 || !(ROLES as readonly string[]).includes(role)) {
      throw new UsageError(`--model takes ROLE=URI with ROLE one of ${ROLES.join(", ")}: ${flag}`);
    }
    const uri = flag.slice(eq + 1);
    const parsed = parseModelUri(uri);
    if (!parsed.ok)
      throw new UsageError(`--model ${role}: ${parsed.errors[0]?.message ?? "invalid"}`);
    models[role] =
      parsed.value.kind === "scripted" ? `scripted:${path.resolve(parsed.value.path)}` : uri;
  }
  return models;
}

/**
 * Asks on this terminal, with the live view's status line held off the prompt's row. The prompt goes
 * where the live view goes (stderr when stdout carries the `--json` result).
 */
const terminalAsk =
  (view: LiveView, output: NodeJS.WritableStream): Ask =>
  async (request, signal) => {
    view.hold();
    const rl = createInterface({ input: process.stdin, output });
    try {
      const answer = await rl.question(`approve ${request.step} of ${request.run}? [y/N] `, {
        signal,
      });
      return /^y(es)?$/i.test(answer.trim()) ? "approve" : "deny";
    } catch {
      return undefined;
    } finally {
      rl.close();
    }
  };

/** A drive's context, and what ends the MCP connections its passages opened. */
export interface ComposedContext extends RuntimeContext {
  /** Closes every MCP connection and stdio server of this context's passages and gives back the
   * baselines its runs pinned; idempotent. */
  closeTools(): Promise<void>;
}

export interface DriveFlags {
  readonly yes: boolean;
  readonly interactive: boolean;
  /** stdout carries the `--json` result: the approval prompt goes to stderr. */
  readonly json?: boolean;
  /** Signs proposals and execution records. */
  readonly hostKey?: Uint8Array;
  /** The containment backend detected on this host; none means every run is refused. */
  readonly sandbox?: Sandbox | undefined;
  /** Told which loop a passage's tools serve (a worker closes them when that loop's drive ends). */
  readonly onTools?: (query: string, tools: PassageTools) => void;
}

/** What the host brings to a drive: its signing key and its containment backend. */
export interface HostParts {
  readonly hostKey: Uint8Array;
  readonly sandbox: Sandbox | undefined;
}

/** The first containment backend that proves itself (bwrap, then unshare), or none, said why. */
export async function hostSandbox(): Promise<Sandbox | undefined> {
  const detected = await detectSandbox();
  if (detected.ok) return detected.value;
  err(
    `warrant: ${detected.errors[0]?.message ?? "no containment backend"}; every run will be refused`,
  );
  return undefined;
}

export function composeContext(
  store: LedgerStore,
  models: ModelForPassage,
  flags: DriveFlags,
  view: LiveView,
  clock: Clock = systemClock,
): ComposedContext {
  const loop = new LoopLedger(store);
  // Workspace reads of the baseline, the pack's observation profiles contained in the host's
  // sandbox (none detected: not offered), plus the MCP servers an agent definition declares.
  const tools = createPassageTools({
    workspace: (root) => createWorkspaceTools({ root }),
    sandbox: flags.sandbox,
  });
  const toolsFor: ToolsForPassage = (request) => {
    flags.onTools?.(request.query, tools);
    return tools.toolsFor(request);
  };
  const operator = operatorBinding();
  const sandbox = sandboxPort(flags.sandbox);
  const emit = view.emit.bind(view);
  const ask =
    flags.interactive && process.stdin.isTTY === true
      ? terminalAsk(view, flags.json === true ? process.stderr : process.stdout)
      : undefined;
  return {
    store,
    loop,
    passages: createAgentPassages(models, toolsFor),
    sandbox,
    approver: createApprover({
      store,
      loop,
      clock,
      sleep,
      emit,
      operator,
      autoApprove: flags.yes,
      ...(ask === undefined ? {} : { ask }),
    }),
    clock,
    sleep,
    emit,
    operator,
    ...(flags.hostKey === undefined ? {} : { hostKey: flags.hostKey }),
    // The drive's end: its passages' tools, and the baselines its runs pinned.
    closeTools: async () => {
      await tools.close();
      await sandbox.close?.();
    },
  };
}

/** The live view: on stdout, or on stderr when stdout carries the `--json` result. */
function liveView(json: boolean): LiveView {
  const stream = json ? process.stderr : process.stdout;
  return createLiveView((t) => stream.write(t), {
    tty: stream.isTTY === true,
    clock: systemClock,
    columns: () => stream.columns,
  });
}

/** Prints how a drive ended and sets the exit code: 0 unless the loop stopped without success. */
export function reportDrive(
  result: DriveResult | "leased-elsewhere",
  query: string,
  storeUri: string,
  json = false,
): void {
  if (json) {
    reportJson(result, query, storeUri);
    return;
  }
  if (result === "leased-elsewhere") {
    err(`warrant: interface/lease-lost: ${query} is being driven by another process`);
    process.exitCode = EXIT_INVALID;
    out(`query: ${query}`);
    return;
  }
  const doc = result.document;
  if (result.status === "stopped") {
    const stop = doc.stop;
    const detail =
      stop === undefined
        ? ""
        : "execution/ref" in stop
          ? ` (${stop["execution/ref"]}${"refusal/code" in stop ? `, ${stop["refusal/code"]}` : ""})`
          : ` (by ${stop["operator/binding-ref"]})`;
    out(`loop stopped: ${stop?.reason ?? "?"}${detail}`);
    process.exitCode = stop?.reason === "succeeded" ? EXIT_OK : EXIT_INVALID;
  } else {
    out(
      `loop blocked: ${result.reason}${result.counter === undefined ? "" : ` (${result.counter})`}: ${result.detail}`,
    );
    out(
      `  the operator may: warrant renew ${query} --extend MS | warrant answer ${query} TEXT | warrant cancel ${query}; then warrant resume ${query}`,
    );
    process.exitCode = EXIT_OK;
  }
  out(`ledger: ${storeUri}`);
  out(
    `inspect: warrant show ${query} --store ${storeUri}   (export: warrant export ${query} --store ${storeUri})`,
  );
  out(`query: ${query}`);
}

/** `--json`: {query, store, status, stop?, blocked?} on stdout. */
function reportJson(result: DriveResult | "leased-elsewhere", query: string, store: string): void {
  if (result === "leased-elsewhere") {
    printJson({ query, store, status: "leased-elsewhere", code: "interface/lease-lost" });
    process.exitCode = EXIT_INVALID;
    return;
  }
  const doc = result.document;
  if (result.status === "stopped") {
    printJson({ query, store, status: "stopped", stop: doc.stop, spent: doc.spent });
    process.exitCode = doc.stop?.reason === "succeeded" ? EXIT_OK : EXIT_INVALID;
    return;
  }
  const { reason, counter, detail } = result;
  printJson({
    query,
    store,
    status: "blocked",
    blocked: { reason, ...(counter === undefined ? {} : { counter }), detail },
    spent: doc.spent,
  });
  process.exitCode = EXIT_OK;
}

/** Opens the store and the host key kept beside it (created on first use). */
async function withStoreAndHost<T>(
  flag: string | undefined,
  f: (store: LedgerStore, uri: string, host: HostParts) => Promise<T>,
): Promise<T> {
  const resolved = resolveStoreUri(flag);
  const store = await openStore(resolved);
  try {
    const hostKey = await loadOrCreateHostKey(hostKeyDir(resolved));
    return await f(store, store.uri, { hostKey, sandbox: await hostSandbox() });
  } finally {
    await store.close();
  }
}

async function runPack(
  pack: LoadedPack,
  models: Record<string, string>,
  flags: DriveFlags & { store?: string; json?: boolean },
): Promise<void> {
  await withStoreAndHost(flags.store, async (store, uri, host) => {
    const view = liveView(flags.json === true);
    const ctx = composeContext(store, modelsFor(models), { ...flags, ...host }, view);
    try {
      const query = await startLoop(ctx, pack, models);
      const result = await driveUnderLease(ctx, query, pack, leaseHolder());
      await ctx.closeTools();
      view.close();
      reportDrive(result, query, uri, flags.json === true);
    } finally {
      view.close();
      await ctx.closeTools();
    }
  });
}

interface RunFlags {
  readonly model?: string[];
  readonly yes?: boolean;
  readonly store?: string;
  readonly dispatch?: boolean;
  readonly json?: boolean;
}

function jobQueue(storeFlag: string | undefined): JobQueue {
  const parsed = parseStoreUri(resolveStoreUri(storeFlag));
  if (!parsed.ok || parsed.value.kind !== "postgres") {
    throw new UsageError("workers and --dispatch need a postgres://… store");
  }
  return jobQueueOf(parsed.value.connectionString, parsed.value.schema);
}

async function dispatchPack(
  pack: LoadedPack,
  models: Record<string, string>,
  storeFlag: string | undefined,
  json: boolean,
): Promise<void> {
  const queue = jobQueue(storeFlag);
  await withStoreAndHost(storeFlag, async (store, uri, host) => {
    const view = liveView(json);
    const flags = { yes: false, interactive: false, ...host };
    const ctx = composeContext(store, modelsFor(models), flags, view);
    const query = await startLoop(ctx, pack, models).finally(() => ctx.closeTools());
    view.close();
    await dispatchLoop(queue, query);
    if (json) {
      printJson({ query, store: uri, status: "dispatched" });
      return;
    }
    out(`dispatched to the workers of ${uri}`);
    out(`query: ${query}`);
  });
}

async function loadOrFail(file: string): Promise<LoadedPack | undefined> {
  // A task-pack path that names no file is a usage error (2); a pack that fails to load is invalid (1).
  let isFile = false;
  try {
    isFile = statSync(file).isFile();
  } catch {
    throw new UsageError(`cannot read ${file}: no such file`);
  }
  if (!isFile) throw new UsageError(`cannot read ${file}: not a file`);
  const loaded = await loadTaskPack(file);
  if (loaded.ok) return loaded.value;
  for (const p of loaded.errors) err(formatProblem(file, p));
  process.exitCode = EXIT_INVALID;
  return undefined;
}

export function demoPackFile(): string {
  return path.join(packageRoot(), "examples/fix-failing-test/task-pack.json");
}

export function demoModels(): Record<string, string> {
  const dir = path.join(packageRoot(), "examples/fix-failing-test/scripted");
  return Object.fromEntries(
    (["implementer", "reviewer", "summarizer"] as const).map((r) => [
      r,
      `scripted:${path.join(dir, `${r}.jsonl`)}`,
    ]),
  );
}

export function registerRunCommands(program: Command): void {
  program
    .command("demo")
    .description("run the bundled fix-failing-test example end to end with scripted agents")
    .option(
      "--store <uri>",
      "ledger store URI (default: $WARRANT_STORE, else sqlite:.warrant/ledger.db)",
    )
    .option("--interactive", "ask before each mutation instead of approving it")
    .option(
      "--json",
      "machine output: {query, store, status, stop?, blocked?, spent} (live view on stderr)",
    )
    .action(async (o: { store?: string; interactive?: boolean; json?: boolean }) => {
      const pack = await loadOrFail(demoPackFile());
      if (pack === undefined) return;
      const interactive = o.interactive === true;
      const json = o.json === true;
      // With --json stdout carries only the result; the story goes with the live view to stderr.
      const say = json ? err : out;
      say("warrant demo: fix-failing-test with scripted agents, in the real sandbox.");
      if (!interactive)
        say("The demo approves each mutation itself (run with --interactive to decide).");
      await runPack(pack, demoModels(), {
        yes: !interactive,
        interactive,
        json,
        ...(o.store === undefined ? {} : { store: o.store }),
      });
    });

  program
    .command("run")
    .description("open a loop for a task pack and drive it")
    .argument("<taskpack>", "task-pack file")
    .option(
      "--model <role=uri...>",
      "model per role: scripted:PATH, openai:MODEL, openai-compatible:URL#MODEL, anthropic:MODEL",
    )
    .option("--yes", "approve every mutation without asking (recorded as such)")
    .option(
      "--store <uri>",
      "ledger store URI (default: $WARRANT_STORE, else sqlite:.warrant/ledger.db)",
    )
    .option("--dispatch", "open the loop and queue it for `warrant worker` (PostgreSQL) instead")
    .option(
      "--json",
      "machine output: {query, store, status, stop?, blocked?, spent} (live view on stderr)",
    )
    .action(async (file: string, o: RunFlags) => {
      const models = parseModelFlags(o.model ?? []);
      const pack = await loadOrFail(file);
      if (pack === undefined) return;
      for (const role of ROLES) {
        if (pack.agents[role] !== undefined && models[role] === undefined) {
          throw new UsageError(`no model for ${role}: pass --model ${role}=URI`);
        }
      }
      if (o.dispatch === true) {
        await dispatchPack(pack, models, o.store, o.json === true);
        return;
      }
      await runPack(pack, models, {
        yes: o.yes === true,
        interactive: true,
        json: o.json === true,
        ...(o.store === undefined ? {} : { store: o.store }),
      });
    });

  program
    .command("worker")
    .description("drive dispatched loops from a shared PostgreSQL store (graphile-worker queue)")
    .requiredOption("--store <uri>", "postgres://… store URI")
    .option("--concurrency <n>", "loops driven at once", "2")
    .option("--yes", "approve every mutation without asking (recorded as such)")
    .option(
      "--json",
      "machine output: one JSON object a line, {at, event: started|start|busy|end, …} " +
        "(live view on stderr)",
    )
    .action(async (o: { store: string; concurrency: string; yes?: boolean; json?: boolean }) => {
      const concurrency = Number(o.concurrency);
      if (!Number.isSafeInteger(concurrency) || concurrency < 1) {
        throw new UsageError("--concurrency takes a positive integer");
      }
      const json = o.json === true;
      const queue = jobQueue(o.store);
      await withStoreAndHost(o.store, async (store, uri, host) => {
        const holder = `worker:${leaseHolder()}`;
        if (json) {
          const at = new Date().toISOString();
          out(JSON.stringify({ at, event: "started", holder, store: uri, schema: queue.schema }));
        } else out(`warrant worker ${holder} on ${uri} (queue schema ${queue.schema})`);
        const viewStream = json ? process.stderr : process.stdout;
        // Each loop's passage tools (MCP servers) are closed when the drive of that loop ends.
        const toolsOf = new Map<string, Set<PassageTools>>();
        const closeToolsOf = async (query: string) => {
          const open = toolsOf.get(query);
          toolsOf.delete(query);
          await Promise.all([...(open ?? [])].map((t) => t.close()));
        };
        const onTools = (query: string, tools: PassageTools) => {
          const open = toolsOf.get(query) ?? new Set();
          open.add(tools);
          toolsOf.set(query, open);
        };
        const runner = await startWorker({
          queue,
          concurrency,
          holder,
          handleSignals: true,
          context: (models) => {
            const view = createLiveView((t) => viewStream.write(t), {
              tty: false,
              clock: systemClock,
            });
            return composeContext(
              store,
              modelsFor(models),
              { yes: o.yes === true, interactive: false, ...host, onTools },
              view,
            );
          },
          onEvent: (e) => {
            if (e.kind !== "start") void closeToolsOf(e.query);
            const at = new Date().toISOString();
            if (json) {
              out(JSON.stringify(workerEventJson(at, e)));
              return;
            }
            if (e.kind === "end") {
              const r = e.result;
              const how =
                r.status === "stopped"
                  ? `stopped ${r.document.stop?.reason ?? ""}`
                  : `blocked ${r.reason}`;
              out(`${at} drive-end ${e.query} ${how}`);
            } else out(`${at} drive-${e.kind} ${e.query}`);
          },
        });
        try {
          await runner.promise;
        } finally {
          await Promise.all([...toolsOf.keys()].map(closeToolsOf));
        }
      });
    });

  program
    .command("resume")
    .description("drive an existing loop on from where its ledger stands")
    .argument("<query>", "the loop's query id")
    .option("--yes", "approve every mutation without asking (recorded as such)")
    .option(
      "--store <uri>",
      "ledger store URI (default: $WARRANT_STORE, else sqlite:.warrant/ledger.db)",
    )
    .option(
      "--json",
      "machine output: {query, store, status, stop?, blocked?, spent} (live view on stderr)",
    )
    .action(async (query: string, o: { yes?: boolean; store?: string; json?: boolean }) => {
      const json = o.json === true;
      await withStoreAndHost(o.store, async (store, uri, host) => {
        const view = liveView(json);
        try {
          const probe = await new LoopLedger(store).document(query, new Date());
          if (probe === undefined) {
            err(`warrant: loop/not-opened: no loop ${query} in ${uri}`);
            process.exitCode = EXIT_INVALID;
            return;
          }
          if (probe.state === "stopped" && (await unconcludedRuns(store, query)) === 0) {
            process.exitCode = EXIT_OK;
            if (json) {
              printJson({
                query,
                store: uri,
                status: "stopped",
                stop: probe.stop,
                spent: probe.spent,
              });
              return;
            }
            out(`loop ${query} is stopped: ${probe.stop?.reason ?? "?"}`);
            out(`query: ${query}`);
            process.exitCode = EXIT_OK;
            return;
          }
          const binding = await bindingOf({ store } as RuntimeContext, query);
          const pack = await packOf(binding);
          const ctx = composeContext(
            store,
            modelsFor(binding.models),
            { yes: o.yes === true, interactive: true, json, ...host },
            view,
          );
          const result = await driveUnderLease(ctx, query, pack, leaseHolder(), {
            waitMs: leaseTtlMs() + 1000,
          }).finally(() => ctx.closeTools());
          view.close();
          reportDrive(result, query, uri, json);
        } finally {
          view.close();
        }
      });
    });
}

/** One `worker --json` line: a drive's start, a loop another worker holds, or a drive's end. */
function workerEventJson(at: string, e: WorkerEvent): Record<string, unknown> {
  if (e.kind !== "end") return { at, event: e.kind, query: e.query };
  const r = e.result;
  return r.status === "stopped"
    ? { at, event: "end", query: e.query, status: "stopped", stop: r.document.stop }
    : {
        at,
        event: "end",
        query: e.query,
        status: "blocked",
        blocked: {
          reason: r.reason,
          ...(r.counter === undefined ? {} : { counter: r.counter }),
          detail: r.detail,
        },
      };
}

async function unconcludedRuns(store: LedgerStore, query: string): Promise<number> {
  const facts = (await store.readFacts(query)).map((s) => s.fact.step);
  const admitted = facts.filter((s) => s.kind === "run-admitted").length;
  const concluded = facts.filter((s) => s.kind === "concluded").length;
  return admitted - concluded;
}
