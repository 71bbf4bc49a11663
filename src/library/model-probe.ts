// The reachability probe of live model endpoints (`warrant run --check --probe`): for each role
// whose model is `openai:`, `openai-compatible:` or `anthropic:`, a `GET …/models` with the key the
// provider would send; where the server has no such route (404, 405), a call for one output token.
// A role whose key or base URL the model check refuses is not probed.
// Keys go only into the request's own header: the probe follows no redirect, reads at most 1 MiB
// of an answer, never reports a body, and gives up after its time limit.
import { parseModelUri } from "../adapters/models/model-uri.js";
import { ROLES } from "../core/loop/types.js";
import { pointer } from "../core/result.js";
import { baseUrlProblem } from "./preflight-models.js";
import type { CheckProblem, Env, PreflightCheck } from "./preflight-types.js";

const OPENAI_API = "https://api.openai.com/v1";
const ANTHROPIC_API = "https://api.anthropic.com";
const ANTHROPIC_VERSION = "2023-06-01";
const DEFAULT_TIMEOUT_MS = 10_000;
const MAX_BODY_BYTES = 1 << 20;

const present = (v: string | undefined): v is string => v !== undefined && v !== "";

interface Endpoint {
  /** The base URL the adapter talks to (never with credentials: those are refused earlier). */
  readonly base: string;
  readonly model: string;
  readonly headers: Readonly<Record<string, string>>;
  /** `GET` of the model list, and a one-token call where that route is missing. */
  readonly list: string;
  readonly call: { readonly url: string; readonly body: unknown };
}

/** The endpoint a model URI talks to, or undefined when it is no live model (or lacks its key). */
export function endpointOf(uri: string, env: Env): Endpoint | undefined {
  const parsed = parseModelUri(uri);
  if (!parsed.ok) return undefined;
  const u = parsed.value;
  const ping = [{ role: "user", content: "ping" }];
  switch (u.kind) {
    case "scripted":
      return undefined;
    case "openai":
    case "openai-compatible": {
      const key = env.OPENAI_API_KEY;
      if (u.kind === "openai" && !present(key)) return undefined;
      if (
        u.kind === "openai" &&
        present(env.OPENAI_BASE_URL) &&
        baseUrlProblem(env.OPENAI_BASE_URL)
      )
        return undefined;
      const base = (
        u.kind === "openai-compatible"
          ? u.baseURL
          : present(env.OPENAI_BASE_URL)
            ? env.OPENAI_BASE_URL
            : OPENAI_API
      ).replace(/\/+$/, "");
      const tokens = u.kind === "openai" ? { max_completion_tokens: 1 } : { max_tokens: 1 };
      return {
        base,
        model: u.model,
        headers: present(key) ? { authorization: `Bearer ${key}` } : {},
        list: `${base}/models`,
        call: {
          url: `${base}/chat/completions`,
          body: { model: u.model, messages: ping, ...tokens },
        },
      };
    }
    case "anthropic": {
      const key = env.ANTHROPIC_API_KEY;
      if (!present(key)) return undefined;
      if (present(env.ANTHROPIC_BASE_URL) && baseUrlProblem(env.ANTHROPIC_BASE_URL))
        return undefined;
      const base = (
        present(env.ANTHROPIC_BASE_URL) ? env.ANTHROPIC_BASE_URL : ANTHROPIC_API
      ).replace(/\/+$/, "");
      return {
        base,
        model: u.model,
        headers: { "x-api-key": key, "anthropic-version": ANTHROPIC_VERSION },
        list: `${base}/v1/models`,
        call: {
          url: `${base}/v1/messages`,
          body: { model: u.model, max_tokens: 1, messages: ping },
        },
      };
    }
    default:
      return u satisfies never;
  }
}

/** An answer's first MiB, as text; the rest is never read. */
async function boundedText(res: Response): Promise<string> {
  const reader = res.body?.getReader();
  if (reader === undefined) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
    if (size >= MAX_BODY_BYTES) {
      await reader.cancel();
      break;
    }
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** Whether a model list (`{data: [{id}]}`) names the model; null when the answer is no such list. */
function listed(text: string, model: string): boolean | null {
  try {
    const data = (JSON.parse(text) as { data?: unknown }).data;
    if (!Array.isArray(data)) return null;
    return data.some((m) => (m as { id?: unknown } | null)?.id === model);
  } catch {
    return null;
  }
}

function statusCode(status: number): string {
  if (status === 401 || status === 403) return "model/auth";
  if (status === 429) return "model/rate-limited";
  if (status >= 500) return "model/unavailable";
  return "model/bad-request";
}

export type ProbeResult =
  | {
      readonly ok: true;
      readonly endpoint: string;
      readonly how: "list" | "call";
      /** Whether the server's model list names the model (null: no list, or probed by a call). */
      readonly listed: boolean | null;
    }
  | {
      readonly ok: false;
      readonly endpoint: string;
      readonly code: string;
      readonly message: string;
    };

/** Probes one endpoint; never throws, never reports a key or an answer's body. */
export async function probeEndpoint(e: Endpoint, timeoutMs: number): Promise<ProbeResult> {
  const signal = AbortSignal.timeout(timeoutMs);
  const request = async (url: string, body?: unknown) =>
    fetch(url, {
      method: body === undefined ? "GET" : "POST",
      headers: {
        ...e.headers,
        accept: "application/json",
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      redirect: "manual",
      signal,
    });
  const endpoint = e.base;
  try {
    let how: "list" | "call" = "list";
    let res = await request(e.list);
    if (res.status === 404 || res.status === 405) {
      await res.body?.cancel();
      how = "call";
      res = await request(e.call.url, e.call.body);
    }
    if (res.status >= 300 && res.status < 400) {
      await res.body?.cancel();
      const message = `${endpoint} answered with a redirect (${res.status}); the probe follows none`;
      return { ok: false, endpoint, code: "model/unreachable", message };
    }
    const text = await boundedText(res);
    if (!res.ok) {
      const message = `${endpoint} answered ${res.status} to ${how === "list" ? "GET /models" : "a one-token call"}`;
      return { ok: false, endpoint, code: statusCode(res.status), message };
    }
    return { ok: true, endpoint, how, listed: how === "list" ? listed(text, e.model) : null };
  } catch (err) {
    const timedOut = signal.aborted;
    return {
      ok: false,
      endpoint,
      code: timedOut ? "model/timeout" : "model/unreachable",
      message: timedOut
        ? `${endpoint} did not answer within ${timeoutMs} ms`
        : `${endpoint} cannot be reached (${(err as { cause?: { code?: string } }).cause?.code ?? "connection failed"})`,
    };
  }
}

export const MODEL_PROBE: PreflightCheck = {
  name: "probe",
  async run({ pack, models, env, probeTimeoutMs }) {
    const problems: CheckProblem[] = [];
    const notes: string[] = [];
    for (const role of ROLES) {
      const uri = models[role];
      if (pack.agents[role] === undefined || uri === undefined) continue;
      const e = endpointOf(uri, env);
      if (e === undefined) continue;
      const r = await probeEndpoint(e, probeTimeoutMs ?? DEFAULT_TIMEOUT_MS);
      if (!r.ok) {
        problems.push({
          code: r.code,
          path: pointer("models", role),
          message: `${role}: ${r.message}`,
        });
        continue;
      }
      const how = r.how === "list" ? "GET /models" : "a one-token call";
      const named =
        r.listed === null
          ? ""
          : r.listed
            ? `; it lists ${e.model}`
            : `; its list does not name ${e.model}`;
      notes.push(`${role}: ${r.endpoint} answered ${how}${named}`);
    }
    return { problems, notes };
  },
};
