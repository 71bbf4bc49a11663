// Sub-agents as tools: each `subAgents[]` entry of a definition is offered as `agent.<name>`. A call
// charges a nested passage to the parent's role (its own `passage-charged` fact, under a ref made
// from the parent's ref, the sub-agent's id and the call's place, so a parent redone after a crash
// replays the charge instead of paying twice), runs it under the same limits, stores its transcript
// and end (naming the parent), and answers the parent with the sub-agent's typed message — or, for
// a nested passage already ended before a crash, with the message it ended with.

import type { Role } from "../core/loop/types.js";
import { type ToolHost, toolAnswer, toolFailure } from "../core/ports/tool-host.js";
import { digestOf } from "../core/records/canonical.js";
import { nestedPassageRef } from "../core/records/passage-ref.js";
import type { TypedMessage } from "../core/turn/payloads.js";
import type { ToolSpec } from "../core/turn/tool-registry.js";
import type { MessageType } from "../core/turn/types.js";
import { type AgentSite, subAgentSite } from "./agent-site.js";
import type { PassageLedger, PassageOutcome } from "./context.js";
import type { Emit } from "./events.js";
import { ledgerWrite } from "./passage.js";
import { makeRecord, type PassageEndBody } from "./records.js";

export const SUB_AGENT_PREFIX = "agent.";
/** What a sub-agent's passage may end with: its answer to the parent. */
export const SUB_AGENT_MESSAGE_TYPES: readonly MessageType[] = ["Result", "Finding"];

/** The tool name of a sub-agent (the schema's name pattern always makes a valid tool name). */
export function subAgentToolName(name: string): string {
  return `${SUB_AGENT_PREFIX}${name}`;
}

/** Runs one nested passage of a sub-agent (the passage runner, recursively). */
export type RunNested = (nested: {
  readonly site: AgentSite;
  readonly passageRef: string;
  readonly evidence: string;
  readonly priorCalls: number;
}) => Promise<PassageOutcome>;

export interface SubAgentContext {
  readonly query: string;
  readonly role: Role;
  readonly parent: AgentSite;
  readonly parentRef: string;
  readonly ledger: PassageLedger;
  readonly emit: Emit;
  readonly run: RunNested;
}

/** The specs of a definition's sub-agent tools (static per agent: its registry compiles once). */
export function subAgentSpecs(parent: AgentSite): ToolSpec[] {
  return (parent.definition.subAgents ?? []).map((sub) => ({
    name: subAgentToolName(sub.name),
    description: `Ask the sub-agent ${sub.name} to do a task; it answers with a Result or Finding.${sub.description === undefined ? "" : ` ${sub.description}`}`,
    inputSchema: {
      type: "object",
      properties: { task: { type: "string", minLength: 1, description: "What to do, in full." } },
      required: ["task"],
      additionalProperties: false,
    },
    effect: "observation",
  }));
}

function answer(ref: string, end: PassageEndBody) {
  const body = {
    "passage/ref": ref,
    ...(end["transcript/ref"] === undefined ? {} : { "transcript/ref": end["transcript/ref"] }),
    ...(end.message === undefined
      ? { failure: end.failure }
      : { type: end.message.type, payload: end.message.payload }),
  };
  return toolAnswer(JSON.stringify(body), end.message === undefined);
}

/** The sub-agent tools of one passage of `parent`. */
export function subAgentTools(ctx: SubAgentContext): ToolHost {
  const specs = subAgentSpecs(ctx.parent);
  const subs = ctx.parent.definition.subAgents ?? [];
  let ordinal = 0;
  return {
    specs: () => specs,
    async call(name, args) {
      const index = subs.findIndex((s) => subAgentToolName(s.name) === name);
      const site = index < 0 ? undefined : subAgentSite(ctx.parent, index);
      if (site === undefined) return toolFailure("tool/unknown", `no sub-agent tool ${name}`);
      const n = ++ordinal;
      const ref = nestedPassageRef(ctx.parentRef, site.id, n);
      const { query, role, ledger } = ctx;
      const decision = await ledgerWrite(() =>
        ledger.loop.execute(
          query,
          { op: "charge-passage", role, agent: site.id, passage: ref },
          ledger.now(),
        ),
      );
      if (decision.result === "refused") {
        const { code, message } = decision.refusal;
        return toolFailure(code, `the sub-agent ${site.definition.name} was not run: ${message}`);
      }
      const records = await ledgerWrite(() => ledger.store.listRecords(query));
      const ends = records
        .filter((r) => r.kind === "passageEnd")
        .map((r) => r.body as PassageEndBody);
      const ended = ends.find((e) => e["passage/ref"] === ref);
      if (ended !== undefined) return answer(ref, ended);
      if (decision.result === "appended") {
        const doc = await ledger.loop.document(query, ledger.now());
        if (doc !== undefined) {
          ctx.emit({
            kind: "fact",
            query,
            sequence: decision.fact.sequence,
            step: decision.fact.step,
            summary: `passage-charged ${role} ${ref} (sub-agent ${site.definition.name})`,
            document: doc,
          });
        }
      }
      ctx.emit({
        kind: "passage-start",
        query,
        role,
        passageRef: ref,
        agentId: site.id,
        redone: decision.result === "replayed",
      });
      const evidence = `The ${role}'s agent ${ctx.parent.definition.name} asks you:\n\n${String(args.task ?? "")}`;
      const priorCalls = ends
        .filter((e) => e["agent/id"] === site.id)
        .reduce((sum, e) => sum + e["model/calls"], 0);
      const outcome = await ctx.run({ site, passageRef: ref, evidence, priorCalls });
      const base = {
        "query/id": query,
        "passage/ref": ref,
        role,
        "agent/id": site.id,
        "evidence/digest": digestOf(evidence),
        "parent/ref": ctx.parentRef,
        ...(outcome.transcript === undefined ? {} : { "transcript/ref": outcome.transcript.ref }),
        "model/calls": outcome.modelCalls ?? 0,
        "ended-at": ledger.now().toISOString(),
      };
      const end: PassageEndBody = outcome.ok
        ? { ...base, message: outcome.message as TypedMessage }
        : { ...base, failure: { code: outcome.code, message: outcome.message } };
      await ledgerWrite(() =>
        ledger.store.putRecords([
          ...(outcome.transcript === undefined ? [] : [outcome.transcript]),
          makeRecord("passageEnd", query, end),
        ]),
      );
      ctx.emit({
        kind: "passage-end",
        query,
        role,
        passageRef: ref,
        agentId: site.id,
        outcome: outcome.ok
          ? { ok: true, type: outcome.message.type }
          : { ok: false, code: outcome.code, message: outcome.message },
        ...(outcome.usage === undefined ? {} : { usage: outcome.usage }),
      });
      return answer(ref, end);
    },
  };
}
