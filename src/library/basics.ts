// The small values every command reaches for first (loop and record references, store URIs,
// terminal-safe text, the error type), re-exported from where they live without the rest of the
// library: a command that only reads the ledger loads neither the runtime nor the sandbox for them.
// The same names are exported by the package's index.
export { parseModelUri } from "../adapters/models/model-uri.js";
export {
  isSandboxChoice,
  SANDBOX_CHOICES,
  type SandboxChoice,
} from "../adapters/sandbox/sandbox-choice.js";
export { parseStoreUri, resolveStoreUri } from "../adapters/store/store-uri.js";
export { parseRecordRef, toQueryId } from "../core/ids.js";
export { ROLES } from "../core/loop/types.js";
export { WarrantError } from "../core/result.js";
export { terminalLine, terminalSafe } from "../core/text/terminal-text.js";
export { DEFAULT_SHUTDOWN_TIMEOUT_MS } from "../runtime/drive-defaults.js";
