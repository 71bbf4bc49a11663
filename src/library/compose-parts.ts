// What the two halves of the composition share (compose.ts, and compose-drive.ts, which only a
// drive loads): the parts made once from the options, and a drive's settings and context.
import type { createDefinitionFiles } from "../adapters/fs/definition-files.js";
import type { Role } from "../core/loop/types.js";
import type { LedgerStore } from "../core/ports/ledger-store.js";
import type { Sandbox } from "../core/ports/sandbox.js";
import type { RecordSigner } from "../core/ports/signer.js";
import type { Clock, Time } from "../core/ports/time.js";
import type { ToolHost } from "../core/ports/tool-host.js";
import type { RuntimeContext } from "../runtime/context.js";
import type { providerOf } from "./model.js";
import type { WarrantOptions } from "./options.js";
import type { Telemetry } from "./telemetry.js";

/**
 * What one drive sets in place of the options: an approver (an eval's approval policy), and
 * whether a role's recorded model URI is resolved as a URI when the options' models do not answer
 * for it (an eval's cells name their models by URI).
 */
export interface DriveSettings {
  readonly approver?: WarrantOptions["approver"];
  readonly modelUris?: boolean;
}

/** A drive's context, and what ends the MCP connections its passages opened (idempotent). */
export interface DriveContext extends RuntimeContext {
  close(): Promise<void>;
}

/** A role's model when the run names one (the library's `models`, `--model`), else none. */
export type OverrideOf = (
  role: Role,
  priorCalls: number,
  query: string,
  recorded?: string,
  modelUris?: boolean,
) => { provider: ReturnType<typeof providerOf>; uri: string } | undefined;

/** What the composition's facets share: the options and the parts made from them once. */
export interface Parts {
  readonly o: WarrantOptions;
  readonly store: LedgerStore;
  readonly clock: Clock;
  readonly time: Time;
  readonly env: NodeJS.ProcessEnv;
  readonly operatorNow: () => string;
  readonly sandbox: () => Promise<Sandbox | undefined>;
  readonly signer: () => Promise<RecordSigner | undefined>;
  readonly telemetry: Telemetry;
  readonly files: ReturnType<typeof createDefinitionFiles>;
  readonly skillDirs: readonly string[];
  readonly overrideOf: OverrideOf;
  /** The host of the options' code tools, if any. */
  readonly code: ToolHost | undefined;
  /** The code tools' names (their events' tool kind is `code`). */
  readonly codeNames: ReadonlySet<string | undefined>;
}
