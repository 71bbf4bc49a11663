// The checks an agent definition passes before any loop opens or any passage is charged, and the
// report `warrant definition show` prints: each model resolved for its provider with the settings
// as sent (a setting the provider cannot honour is a warning), skills and read-only memory with
// their recomputed CIDs, writable memory's keys, declared tools and what each binds to, middleware
// and sub-agents (each checked on its own). Problems refuse the run; warnings are told.

import {
  type MiddlewareSpec,
  middlewareModels,
  middlewareSpecs,
} from "../core/definition/middleware-config.js";
import { isDefinitionProvider, wireSettings } from "../core/definition/provider-settings.js";
import type { Model } from "../core/definition/types.js";
import type { ToolHost } from "../core/ports/tool-host.js";
import type { Problem, Result } from "../core/result.js";
import { type AgentSite, subAgentSite } from "./agent-site.js";
import { bindDeclaredTools } from "./declared-tools.js";
import type { DefinitionFiles, PreparedParts } from "./definition-parts.js";

export interface ModelReport {
  readonly index: number;
  readonly provider: string;
  readonly model: string;
  /** The model URI it runs as (absent when it cannot be made). */
  readonly uri?: string;
  /** Whether a passage calls it: the first (unless overridden) and those middleware references. */
  readonly used: boolean;
  /** The settings as the provider's request carries them. */
  readonly sent?: Readonly<Record<string, unknown>>;
  readonly headers?: Readonly<Record<string, string>>;
  readonly unhonoured?: readonly { readonly setting: string; readonly reason: string }[];
}

export interface AgentReport {
  readonly id: string;
  readonly name: string;
  readonly pointer: string;
  readonly models: readonly ModelReport[];
  /** The URI that runs instead of the first model (a root agent's `--model`). */
  readonly override?: string;
  readonly skills: readonly {
    readonly name: string;
    readonly cid: string;
    readonly verified: boolean;
  }[];
  readonly memory: readonly {
    readonly path: string;
    readonly writable: boolean;
    readonly cid?: string;
    readonly verified?: boolean;
    readonly scope?: string;
    readonly namespace?: string;
  }[];
  readonly tools: readonly { readonly name: string; readonly boundTo?: string }[];
  readonly middleware: readonly MiddlewareSpec[];
  readonly permissions: readonly string[];
  readonly guardrails: readonly string[];
  readonly subAgents: readonly AgentReport[];
}

export interface PreflightReport {
  readonly agent: AgentReport;
  readonly problems: readonly Problem[];
  readonly warnings: readonly Problem[];
}

export interface PreflightDeps {
  readonly files: DefinitionFiles;
  readonly skillDirs: readonly string[];
  /** The URI a definition model runs as (`definition/provider-unknown`, a missing base URL, …). */
  readonly modelUri: (model: Model, site: AgentSite) => Result<string>;
  /** The root agent's override, when the run names one. */
  readonly override?: string;
  /** What tools would be offered to the agent's passages; absent: bindings are not checked. */
  readonly offered?: (site: AgentSite) => Promise<Result<ToolHost>>;
  /** The namespace of `namespace`-scoped writable memory, if the pack or the run names one. */
  readonly namespace?: string;
}

function warn(code: string, path: string, message: string): Problem {
  return { code, path, message };
}

async function checkModels(
  site: AgentSite,
  deps: PreflightDeps,
  override: string | undefined,
  middleware: readonly MiddlewareSpec[],
  problems: Problem[],
  warnings: Problem[],
): Promise<ModelReport[]> {
  const used = new Set(middlewareModels(middleware));
  if (override === undefined) used.add(0);
  return site.definition.models.map((m, index): ModelReport => {
    const at = `${site.pointer}/models/${index}`;
    const isUsed = used.has(index);
    const base = { index, provider: m.provider, model: m.model, used: isUsed };
    if (!isDefinitionProvider(m.provider)) {
      if (isUsed)
        problems.push(
          warn(
            "definition/provider-unknown",
            `${at}/provider`,
            `model ${index}: provider ${JSON.stringify(m.provider)} is not one Warrant runs (openai, anthropic, openai-compatible, scripted)`,
          ),
        );
      return base;
    }
    const uri = deps.modelUri(m, site);
    if (!uri.ok && isUsed) problems.push(...uri.errors.map((p) => ({ ...p, path: p.path || at })));
    const wire = wireSettings(m.provider, m.settings);
    if (isUsed) {
      for (const u of wire.unhonoured)
        warnings.push(
          warn(
            "definition/setting-unhonoured",
            `${at}/settings`,
            `model ${index} (${m.provider}): ${u.setting} is not sent: ${u.reason}`,
          ),
        );
      if (wire.toolChoiceAuto)
        warnings.push(
          warn(
            "definition/setting-weakens",
            `${at}/settings/thinking`,
            `model ${index} (anthropic): with thinking on, a tool call cannot be forced; turns are asked for with tool_choice auto`,
          ),
        );
    }
    return {
      ...base,
      ...(uri.ok ? { uri: uri.value } : {}),
      sent: wire.body,
      ...(Object.keys(wire.headers).length === 0 ? {} : { headers: wire.headers }),
      unhonoured: wire.unhonoured,
    };
  });
}

function memoryOf(
  site: AgentSite,
  parts: PreparedParts | undefined,
  deps: PreflightDeps,
  problems: Problem[],
) {
  return (site.definition.memory ?? []).map((m, i) => {
    if (!m.writable) {
      const verified = parts?.memory.some((p) => p.path === m.path) ?? false;
      return {
        path: m.path,
        writable: false,
        ...(m.cid === undefined ? {} : { cid: m.cid }),
        verified,
      };
    }
    const scope = m.scope?.kind ?? "shared";
    if (scope === "namespace" && deps.namespace === undefined) {
      problems.push(
        warn(
          "definition/memory-namespace-missing",
          `${site.pointer}/memory/${i}/scope`,
          `memory ${m.path} is kept per namespace: name one with --namespace or the task pack's "namespace"`,
        ),
      );
    }
    const namespace =
      scope === "shared" ? "" : scope === "thread" ? "(the loop)" : (deps.namespace ?? "");
    return { path: m.path, writable: true, scope, namespace };
  });
}

/** Every check of one agent (and its sub-agents, each on its own). */
export async function preflightAgent(
  site: AgentSite,
  deps: PreflightDeps,
): Promise<PreflightReport> {
  const problems: Problem[] = [];
  const warnings: Problem[] = [];
  const d = site.definition;
  const specs = middlewareSpecs(d.middleware, d.models.length, site.pointer);
  if (!specs.ok) problems.push(...specs.errors);
  const middleware = specs.ok ? specs.value : [];
  const override = site.pointer === "" ? deps.override : undefined;
  const models = await checkModels(site, deps, override, middleware, problems, warnings);

  const prepared = await deps.files.prepare(site, deps.skillDirs);
  if (!prepared.ok) problems.push(...prepared.errors);
  const parts = prepared.ok ? prepared.value : undefined;
  const skills = (d.skills ?? []).map((s) => ({
    name: s.name,
    cid: s.cid,
    verified: parts?.skills.some((p) => p.name === s.name) ?? false,
  }));
  const memory = memoryOf(site, parts, deps, problems);

  const tools: { name: string; boundTo?: string }[] = (d.tools ?? []).map((t) => ({
    name: t.name,
  }));
  if (d.tools !== undefined && d.tools.length > 0 && deps.offered !== undefined) {
    const host = await deps.offered(site);
    if (!host.ok) problems.push(...host.errors);
    else {
      const bound = bindDeclaredTools(d.tools, host.value.specs(), site.pointer);
      if (!bound.ok) problems.push(...bound.errors);
      else
        for (const [i, b] of bound.value.entries())
          tools[i] = { name: b.declared.name, boundTo: b.spec.name };
    }
  }

  const subAgents: AgentReport[] = [];
  for (const i of (d.subAgents ?? []).keys()) {
    const subSite = subAgentSite(site, i);
    if (subSite === undefined) continue;
    const { override: _root, ...subDeps } = deps;
    const report = await preflightAgent(subSite, subDeps);
    problems.push(...report.problems);
    warnings.push(...report.warnings);
    subAgents.push(report.agent);
  }

  return {
    agent: {
      id: site.id,
      name: d.name,
      pointer: site.pointer,
      models,
      ...(override === undefined ? {} : { override }),
      skills,
      memory,
      tools,
      middleware,
      permissions: d.permissions ?? [],
      guardrails: d.guardrails ?? [],
      subAgents,
    },
    problems,
    warnings,
  };
}
