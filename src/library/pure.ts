// The pure checks as the light commands reach them (`definition`, `turn`, `cid`): re-exported from
// the core without the rest of the library, so that such a command loads neither the runtime nor
// an adapter. The same names are exported by the package's index.
export { blobCid } from "../core/cid/cid.js";
export { type ValidDefinition, validateDefinition } from "../core/definition/validate.js";
export { ROLES } from "../core/loop/types.js";
export { canonicalJson } from "../core/records/canonical.js";
export { createToolRegistry, type ToolRegistry } from "../core/turn/tool-registry.js";
export { validateTurn } from "../core/turn/validate-turn.js";
