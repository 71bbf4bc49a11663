// `warrant.evals`: run an eval set, report an eval (from its id or its set file), compare two evals
// (or two agents of one), certify a set's tasks. Everything is read from and written to the
// runtime's store; the report of an eval is a function of the store alone.
import { isEvalId } from "../../core/eval/eval-set.js";
import { heldQueryId } from "../../core/ids.js";
import type { Result } from "../../core/result.js";
import { WarrantError } from "../../core/result.js";
import type { EvalManifest } from "./book.js";
import type { CertifyOptions, CertifyReport, CertifyRuntime } from "./certify.js";
import type { LoadedEvalSet } from "./load.js";
import type { Comparison, EvalReport } from "./report.js";
import type { EvalHandle, EvalRunOptions } from "./run.js";

// Each part is loaded when first used: a runtime that never touches an eval loads none of them.
const book = () => import("./book.js");
const certifyModule = () => import("./certify.js");
const loadModule = () => import("./load.js");
const reportModule = () => import("./report.js");
const runModule = () => import("./run.js");

export interface EvalListing {
  readonly eval: string;
  readonly set: { readonly name: string; readonly digest: string; readonly file: string };
  readonly cells: number;
  readonly agents: readonly string[];
  readonly tasks: readonly string[];
}

export interface Evals {
  /** Loads and checks a set file: its problems (each with a JSON Pointer and line:column), or the set. */
  load(file: string): Promise<Result<LoadedEvalSet>>;
  /** Runs (or runs on) an eval set: a handle over its cell events, its report as `result`. */
  run(set: string | LoadedEvalSet, options?: EvalRunOptions): EvalHandle;
  /** The report of an eval, by its id (`eval:…`) or its set's file. */
  report(id: string): Promise<EvalReport>;
  /** Compares two sides, each `EVAL` (an eval of one agent) or `EVAL:AGENT`, paired by task. */
  compare(base: string, head: string): Promise<Comparison>;
  /** Certifies the tasks of a set that name an oracle (no model is called). */
  certify(set: string | LoadedEvalSet, options?: CertifyOptions): Promise<CertifyReport>;
  /** The evals the store holds, oldest first. */
  list(): Promise<EvalListing[]>;
}

export interface EvalsRuntime extends CertifyRuntime {
  readonly cwd?: string | undefined;
}

/** A set that did not load, as one error naming every problem. */
function loadError(file: string, r: Extract<Result<unknown>, { ok: false }>): WarrantError {
  const first = r.errors[0];
  const all = r.errors.map(
    (p) =>
      `${file} ${p.path === "" ? "(root)" : p.path}${p.line === undefined ? "" : ` ${p.line}:${p.column ?? 1}`}: ${p.code}: ${p.message}`,
  );
  return new WarrantError(first?.code ?? "eval/invalid", all.join("\n"), {
    ...(first?.path === undefined ? {} : { path: first.path }),
  });
}

async function loaded(set: string | LoadedEvalSet): Promise<LoadedEvalSet> {
  if (typeof set !== "string") return set;
  const r = await (await loadModule()).loadEvalSet(set);
  if (!r.ok) throw loadError(set, r);
  return r.value;
}

/** `EVAL` or `EVAL:AGENT`. */
export function parseSide(text: string): { eval: string; agent?: string } {
  if (isEvalId(text)) return { eval: text };
  const colon = text.lastIndexOf(":");
  const id = text.slice(0, colon);
  const agent = text.slice(colon + 1);
  if (colon > 0 && isEvalId(id) && /^[a-z0-9][a-z0-9._-]{0,63}$/.test(agent))
    return { eval: id, agent };
  throw new WarrantError(
    "eval/side-invalid",
    `${JSON.stringify(text.slice(0, 120))} is not EVAL or EVAL:AGENT (an eval id is eval:<set name>-<16 characters>, as \`warrant eval run\` prints it)`,
  );
}

export function createEvals(rt: EvalsRuntime): Evals {
  const store = rt.warrant.store;
  const show = (q: string) => rt.warrant.show(heldQueryId(q));

  const manifestFor = async (id: string): Promise<EvalManifest> => {
    if (isEvalId(id)) {
      const m = await (await book()).manifestOf(store, id);
      if (m === undefined)
        throw new WarrantError("eval/not-found", `no eval ${id} in ${store.uri}`);
      return m;
    }
    const set = await loaded(id);
    return (await runModule()).manifestOfSet(set);
  };

  const reportOf = async (id: string) => {
    const manifest = await manifestFor(id);
    const certified = await (await book()).certifications(store);
    return (await reportModule()).buildReport({ show, store }, manifest, certified);
  };

  return {
    load: async (file) => (await loadModule()).loadEvalSet(file),
    run(set, options = {}) {
      // Loading (the set, the eval's modules) is asynchronous: the handle forwards to the eval
      // once both are loaded, and says through its promises what refused it.
      const started = loaded(set).then(async (s) => (await runModule()).startEval(rt, s, options));
      started.catch(() => undefined);
      const evalId = started.then((h) => h.eval);
      const result = started.then((h) => h.result);
      evalId.catch(() => undefined);
      result.catch(() => undefined);
      return {
        eval: evalId,
        result,
        async *[Symbol.asyncIterator]() {
          yield* await started;
        },
      };
    },
    report: reportOf,
    async compare(baseText, headText) {
      const b = parseSide(baseText);
      const h = parseSide(headText);
      const base = await reportOf(b.eval);
      const head = b.eval === h.eval ? base : await reportOf(h.eval);
      const { compareReports, sideAgent } = await reportModule();
      return compareReports(
        base,
        sideAgent(base, b.agent, baseText),
        head,
        sideAgent(head, h.agent, headText),
      );
    },
    async certify(set, options = {}) {
      const loadedSet = await loaded(set);
      return (await certifyModule()).certifySet(rt, loadedSet, options);
    },
    async list() {
      const seen = new Map<string, EvalListing>();
      for (const m of await (await book()).manifests(store))
        seen.set(m.eval, {
          eval: m.eval,
          set: m.set,
          cells: m.cells.length,
          agents: m.agents,
          tasks: m.tasks.map((t) => t.task),
        });
      return [...seen.values()];
    },
  };
}
