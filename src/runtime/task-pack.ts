// A task pack as the runtime holds it: the validated pack with its files resolved and its agents
// read and identified.
import type { Role } from "../core/loop/types.js";
import type { TaskPack } from "../core/taskpack/task-pack.js";

export interface LoadedAgent {
  /** `agent:<definition CID>`. */
  readonly id: string;
  readonly path: string;
  /** The normalised agent definition. */
  readonly definition: unknown;
}

export interface LoadedPack {
  readonly pack: TaskPack;
  /** Absolute path of the task-pack file. */
  readonly file: string;
  /** `sha256:…` over the pack document's JCS bytes: a resumed loop refuses a changed pack. */
  readonly digest: string;
  /** Absolute path of the baseline workspace. */
  readonly baselineDir: string;
  readonly agents: Readonly<Partial<Record<Role, LoadedAgent>>>;
}
