// Names of MCP tools in the registry: `<server>.<tool>`, inside `^[a-z][a-z0-9_.-]+$`. A name
// already inside the pattern is kept as is; any other is folded to the pattern and suffixed with
// 8 hex digits of SHA-256 of the original, so distinct originals keep distinct names. The mapping
// is one-way as text: a host keeps the table back to the original names.
import { sha256 } from "@noble/hashes/sha2.js";
import { hex } from "../records/canonical.js";

const SERVER_SEGMENT = /^[a-z][a-z0-9_-]*$/;
const TOOL_SEGMENT = /^[a-z0-9_.-]+$/;

function suffix(original: string): string {
  return hex(sha256(new TextEncoder().encode(original))).slice(0, 8);
}

function fold(original: string, keep: RegExp): string {
  return original.toLowerCase().replace(keep, "-").replace(/-+/g, "-").replace(/^-|-$/g, "");
}

/** The server part: no dots (the first dot of a tool name ends it), starts with a letter. */
export function serverSegment(server: string): string {
  if (SERVER_SEGMENT.test(server)) return server;
  const folded = fold(server, /[^a-z0-9_-]+/g);
  const lead = /^[a-z]/.test(folded) ? folded : `s-${folded}`;
  return `${lead.replace(/-$/, "")}-${suffix(server)}`;
}

/** The tool part: dots allowed. */
export function toolSegment(tool: string): string {
  if (TOOL_SEGMENT.test(tool)) return tool;
  const folded = fold(tool, /[^a-z0-9_.-]+/g);
  return folded === "" ? suffix(tool) : `${folded}-${suffix(tool)}`;
}

/** The registry name of tool `tool` of MCP server `server`. */
export function mcpToolName(server: string, tool: string): string {
  return `${serverSegment(server)}.${toolSegment(tool)}`;
}
