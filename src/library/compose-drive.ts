// What only a drive needs of the composition (compose.ts): each drive's context (its passages
// with their models and tools, the sandbox's environments, the approver, the signing store) and
// the check of a pack's definitions before a drive. Loaded on a runtime's first drive or check, so
// that a runtime that only reads the ledger loads neither the passage runtime nor the sandbox.
import { loadPack } from "../adapters/fs/pack-loader.js";
import { createProfileTools } from "../adapters/tools/profile-tools.js";
import { createWorkspaceTools, WORKSPACE_TOOL_SPECS } from "../adapters/tools/workspace-tools.js";
import { ROLES, type Role } from "../core/loop/types.js";
import type { Sandbox } from "../core/ports/sandbox.js";
import type { ToolHost } from "../core/ports/tool-host.js";
import { createAgentPassages, type PassageModels } from "../runtime/agent-passages.js";
import { rootSite } from "../runtime/agent-site.js";
import { type PreflightReport, preflightAgent } from "../runtime/definition-preflight.js";
import type { Emit, ToolKind } from "../runtime/events.js";
import { createApprover } from "../runtime/hil.js";
import { LoopLedger } from "../runtime/loop-ledger.js";
import {
  createPassageTools,
  type McpConnect,
  type PassageTools,
} from "../runtime/passage-tools.js";
import { runEnvironments } from "../runtime/run-environments.js";
import { signingStore } from "../runtime/signing-store.js";
import type { LoadedPack } from "../runtime/task-pack.js";
import type { DriveContext, DriveSettings, Parts } from "./compose-parts.js";
import { definitionModel, runnableModelUri } from "./definition-models.js";
import type { WarrantOptions } from "./options.js";

const WORKSPACE_TOOLS: ReadonlySet<string> = new Set(WORKSPACE_TOOL_SPECS.map((s) => s.name));

const defaultConnect: McpConnect = async (o) =>
  (await import("../adapters/tools/mcp-tool-host.js")).connectMcpToolHost(o);

/** Which kind of tool a name is, for the events. */
function toolKindOf(codeNames: ReadonlySet<string | undefined>): (name: string) => ToolKind {
  return (name) =>
    codeNames.has(name)
      ? "code"
      : WORKSPACE_TOOLS.has(name)
        ? "workspace"
        : name.startsWith("profile.")
          ? "profile"
          : "mcp";
}

/** The models of one drive's passages: its overrides, else its definitions'. */
function passageModels(
  parts: Parts,
  overrides: Readonly<Record<string, string>>,
  modelUris?: boolean,
): PassageModels {
  return {
    override: (role, priorCalls, query) =>
      parts.overrideOf(role, priorCalls, query, overrides[role], modelUris),
    definition: (site, index, priorCalls, pack) =>
      definitionModel(site, index, priorCalls, pack, parts.env),
  };
}

/** The passages' tools: workspace reads, profiles when contained, code tools, MCP. */
async function passageToolsOf(
  o: WarrantOptions,
  sandbox: () => Promise<Sandbox | undefined>,
  code: ToolHost | undefined,
): Promise<PassageTools> {
  const contained = await sandbox();
  return createPassageTools({
    workspace: (root) => createWorkspaceTools({ root }),
    profiles:
      contained === undefined || o.profileTools === false
        ? undefined
        : (commands, baselineDir, resources, host) =>
            createProfileTools({ commands, baselineDir, sandbox: contained, resources, host }),
    code,
    connect: o.mcp?.connect ?? defaultConnect,
    ...(o.mcp?.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: o.mcp.connectTimeoutMs }),
    ...(o.mcp?.callTimeoutMs === undefined ? {} : { callTimeoutMs: o.mcp.callTimeoutMs }),
  });
}

/** See Composition.preflight. */
export async function preflight(
  parts: Parts,
  pack: LoadedPack,
  overrides: Readonly<Record<string, string>>,
  recordedNamespace: string | undefined,
): Promise<Partial<Record<Role, PreflightReport>>> {
  const { env, files, skillDirs } = parts;
  const tools = await passageToolsOf(parts.o, parts.sandbox, parts.code);
  try {
    const reports: Partial<Record<Role, PreflightReport>> = {};
    for (const role of ROLES) {
      const agent = pack.agents[role];
      if (agent === undefined) continue;
      const request = {
        query: "query:preflight",
        role,
        agentId: agent.id,
        passageRef: "passage:preflight",
        evidence: "",
        pack,
        priorCalls: 0,
      };
      const override = overrides[role];
      const namespace = recordedNamespace ?? parts.o.namespace ?? pack.pack.memoryNamespace;
      reports[role] = await preflightAgent(rootSite(agent), {
        files,
        skillDirs,
        modelUri: (model, site) =>
          runnableModelUri(model, site, {
            env,
            compatibleBaseUrl: pack.pack.openaiCompatibleBaseUrl,
          }),
        ...(override === undefined ? {} : { override }),
        offered: (site) => tools.toolsFor(request, site),
        ...(namespace === undefined ? {} : { namespace }),
      });
    }
    return reports;
  } finally {
    await tools.close();
  }
}

/** What the approver asks through, and how the question is recorded, from the options' approver. */
function askOf(a: WarrantOptions["approver"]) {
  return a === undefined || a === "auto" || a === "wait"
    ? {}
    : typeof a === "function"
      ? { ask: a }
      : { ask: a.ask, ...(a.recordedAs === undefined ? {} : { askedText: a.recordedAs }) };
}

/** See Composition.context. */
export async function driveContext(
  parts: Parts,
  overrides: Readonly<Record<string, string>>,
  emit: Emit,
  recordedNamespace: string | undefined,
  drive: DriveSettings | undefined,
): Promise<DriveContext> {
  const { o, store, clock, time, telemetry } = parts;
  const approver = drive?.approver ?? o.approver;
  const tracing = await telemetry.start();
  const found = await parts.sandbox();
  const tools = await passageToolsOf(o, parts.sandbox, parts.code);
  // One per drive: the baselines its runs pin are given back when the drive ends.
  const port = runEnvironments(found);
  const sign = await parts.signer();
  // With a signer, everything the drive writes is signed and its chain heads sealed.
  const signing = sign === undefined ? undefined : signingStore(store, sign, clock);
  const ledger = signing ?? store;
  const loop = new LoopLedger(ledger, time.sleep);
  return {
    store: ledger,
    loop,
    passages: createAgentPassages({
      models: passageModels(parts, overrides, drive?.modelUris),
      tools: tools.toolsFor,
      files: { files: parts.files, skillDirs: parts.skillDirs },
      ...((recordedNamespace ?? o.namespace) === undefined
        ? {}
        : { namespace: recordedNamespace ?? o.namespace }),
      emit,
      toolKind: toolKindOf(parts.codeNames),
      captureContent: telemetry.captureContent,
    }),
    sandbox: port,
    approver: createApprover({
      store: ledger,
      loop,
      clock,
      sleep: time.sleep,
      emit,
      operator: parts.operatorNow(),
      autoApprove: approver === "auto",
      ...askOf(approver),
      ...(o.pollIntervalMs === undefined ? {} : { pollMs: o.pollIntervalMs }),
    }),
    clock,
    time,
    emit,
    operator: parts.operatorNow(),
    ...(sign === undefined ? {} : { signer: sign }),
    ...(signing === undefined ? {} : { sealHead: signing.sealHead }),
    ...(tracing === undefined ? {} : { traceparent: (query) => tracing.traceparent(query) }),
    loadPack,
    close: async () => {
      await tools.close();
      await port.close?.();
    },
  };
}
