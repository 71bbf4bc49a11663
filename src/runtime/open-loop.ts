// Opens the loop of a task pack: the `opened` fact with the effective limits (the pack's limits are
// the ceiling; host caps narrow them) and, in the same append, the binding record that lets a later
// `warrant resume` find the pack and the models again.
import type { LimitLayer, LoopDocument } from "../core/loop/types.js";
import { WarrantError } from "../core/result.js";
import type { RuntimeContext } from "./context.js";
import { makeRecord } from "./records.js";
import type { LoadedPack } from "./task-pack.js";

export interface OpenOptions {
  readonly query: string;
  readonly pack: LoadedPack;
  /** Model URI per role, recorded for resume (never a key). */
  readonly models: Readonly<Record<string, string>>;
  /** The roles whose model the run names instead of their definition's (recorded as such). */
  readonly overrides?: Readonly<Record<string, string>>;
  /** The namespace of namespace-scoped agent memory the run names (recorded for resume). */
  readonly namespace?: string;
  readonly hostCaps?: LimitLayer;
}

export function bindingRefOf(pack: LoadedPack): string {
  return `operator-task-local-binding:${pack.pack.name}`;
}

export async function openLoop(ctx: RuntimeContext, o: OpenOptions): Promise<LoopDocument> {
  const now = ctx.clock.now();
  const binding = bindingRefOf(o.pack);
  const record = makeRecord("binding", o.query, {
    "query/id": o.query,
    "binding/ref": binding,
    "task-pack/file": o.pack.file,
    "task-pack/digest": o.pack.digest,
    models: o.models,
    ...(o.overrides === undefined ? {} : { "model/override": o.overrides }),
    ...(o.namespace === undefined ? {} : { "memory/namespace": o.namespace }),
    "created-at": now.toISOString(),
  });
  const decision = await ctx.loop.execute(
    o.query,
    {
      op: "open",
      query: o.query,
      binding,
      operator: ctx.operator,
      layers: [o.pack.pack.limits, ...(o.hostCaps === undefined ? [] : [{}, o.hostCaps])],
    },
    now,
    [record],
  );
  if (decision.result === "refused") {
    throw new WarrantError(decision.refusal.code, decision.refusal.message);
  }
  const doc = await ctx.loop.document(o.query, now);
  if (doc === undefined) throw new WarrantError("loop/not-opened", `${o.query} did not open`);
  if (decision.result === "appended") {
    const { fact } = decision;
    ctx.emit({
      kind: "fact",
      query: o.query,
      sequence: fact.sequence,
      step: fact.step,
      summary: `opened ${o.query}`,
      document: doc,
    });
  }
  return doc;
}
