// Certifying a set's tasks: the verifier on the untouched baseline (it must fail: the task is real)
// and on the baseline with the oracle applied (it must pass), K times each, no model called.
import { WarrantError } from "../../core/result.js";
import type { Certification } from "./book.js";
import type { LoadedEvalSet } from "./load.js";
import type { EvalRuntime } from "./run.js";

export interface CertifyOptions {
  /** Runs of each side per task (default 3). */
  readonly epochs?: number;
}

export interface CertifyReport {
  readonly eval: string;
  readonly tasks: readonly {
    readonly task: string;
    readonly status: Certification["status"];
    readonly baseline: { readonly passed: number; readonly runs: number };
    readonly oracle: { readonly passed: number; readonly runs: number };
  }[];
}

export async function certifySet(
  _rt: EvalRuntime,
  _set: LoadedEvalSet,
  _options: CertifyOptions,
): Promise<CertifyReport> {
  throw new WarrantError("eval/not-built", "certify is not built yet");
}
