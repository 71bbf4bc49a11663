// Where a model call goes, as tracing names it: the provider, the model asked for, and the server.
// Read from the provider's printable id, or from the base URL its adapter actually calls; never
// from anything that can carry a credential (ids and base URLs refuse user-info).
import type { ModelProvider, ModelTarget } from "../ports/model-provider.js";

export type { ModelTarget } from "../ports/model-provider.js";

const DEFAULT_BASES: Readonly<Record<string, string>> = {
  openai: "https://api.openai.com/v1",
  anthropic: "https://api.anthropic.com",
};

function serverOf(base: string | undefined): ModelTarget["server"] {
  if (base === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    return undefined;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
  const port = url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port);
  // A bracketed IPv6 host is named without its brackets.
  return { address: url.hostname.replace(/^\[(.*)\]$/, "$1"), port };
}

/** The last segment of a path, without its extension: `…/implementer.jsonl` → `implementer`. */
function scriptName(path: string): string {
  const base = path.slice(Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\")) + 1);
  const dot = base.lastIndexOf(".");
  return dot > 0 ? base.slice(0, dot) : base;
}

/**
 * The target of a provider id (`openai:gpt-4.1`, `anthropic:…`, `openai-compatible:URL#MODEL`,
 * `scripted:PATH`, `function:NAME`, anything `scheme:rest`). `baseURL` is the server the adapter
 * calls when it is not the one the id implies (an `OPENAI_BASE_URL`, say).
 */
export function modelTarget(id: string, baseURL?: string): ModelTarget {
  const colon = id.indexOf(":");
  if (colon < 0) return { provider: id, model: id };
  const scheme = id.slice(0, colon);
  const rest = id.slice(colon + 1);
  if (scheme === "openai-compatible") {
    const hash = rest.lastIndexOf("#");
    const base = hash < 0 ? rest : rest.slice(0, hash);
    const model = hash < 0 ? "" : rest.slice(hash + 1);
    const server = serverOf(baseURL ?? base);
    return {
      provider: server?.address ?? scheme,
      model,
      ...(server === undefined ? {} : { server }),
    };
  }
  if (scheme === "scripted") return { provider: scheme, model: scriptName(rest) };
  const server = serverOf(baseURL ?? DEFAULT_BASES[scheme]);
  return { provider: scheme, model: rest, ...(server === undefined ? {} : { server }) };
}

/** The provider's own target when it states one, else the one its id names. */
export function targetOf(provider: Pick<ModelProvider, "id" | "target">): ModelTarget {
  return provider.target ?? modelTarget(provider.id);
}
