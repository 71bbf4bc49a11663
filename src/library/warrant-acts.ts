// The operator's acts, one facet of `createWarrant`: approve or deny a step, renew, cancel or
// answer a loop, each recorded with its operator and signed by the host key (resolved on the first
// act).
import type { QueryId } from "../core/ids.js";
import { WarrantError } from "../core/result.js";
import type { Composition } from "./compose.js";
import {
  type ActContext,
  type ActResult,
  answerLoop,
  cancelLoop,
  decideStep,
  renewLoop,
} from "./operator-acts.js";
import { operatorBindingOf } from "./operators.js";
import type { ActOptions } from "./warrant-types.js";

export interface WarrantActs {
  /**
   * RUN: a proposal ref, or a unique prefix of at least 8 characters of its digest. Each act is
   * recorded with its operator: `options.operator` (a name, or `node-operator-binding:NAME`), else
   * the runtime's (`WarrantOptions.operator`, else `$WARRANT_OPERATOR`, else the login name); a
   * name that is not one is refused `operator/name-invalid`.
   */
  approve(run: string, step: string, options?: ActOptions): Promise<ActResult>;
  /** As approve; `reason` is recorded with the denial (the act's `text`). */
  deny(
    run: string,
    step: string,
    options?: ActOptions & { readonly reason?: string },
  ): Promise<ActResult>;
  renew(query: QueryId, deadline: Date | string, options?: ActOptions): Promise<ActResult>;
  cancel(query: QueryId, options?: ActOptions): Promise<ActResult>;
  answer(query: QueryId, text: string, options?: ActOptions): Promise<ActResult>;
}

export function createActs(c: Composition): WarrantActs {
  // Acts are signed by the host key, resolved on the first act.
  const acts = async (o?: ActOptions): Promise<ActContext> => ({
    store: await c.actingStore(),
    operator: o?.operator === undefined ? c.operator : operatorBindingOf(o.operator),
    now: () => c.clock.now(),
  });
  /** The act, or its refusal when the operator it names is not a name. */
  const act = async (
    o: ActOptions | undefined,
    f: (context: ActContext) => Promise<ActResult>,
  ): Promise<ActResult> => {
    let context: ActContext;
    try {
      context = await acts(o);
    } catch (e) {
      if (e instanceof WarrantError && e.code === "operator/name-invalid")
        return { ok: false, code: e.code, message: e.message };
      throw e;
    }
    return f(context);
  };
  return {
    approve: (run, step, o) => act(o, (x) => decideStep(x, run, step, "approve")),
    deny: (run, step, o) => act(o, (x) => decideStep(x, run, step, "deny", o?.reason)),
    renew: (query, deadline, o) => act(o, (x) => renewLoop(x, query, new Date(deadline))),
    cancel: (query, o) => act(o, (x) => cancelLoop(x, query)),
    answer: (query, text, o) => act(o, (x) => answerLoop(x, query, text)),
  };
}
