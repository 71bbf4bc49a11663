// A local OpenAI-compatible server (127.0.0.1, ephemeral port) whose model knows nothing but what
// each request says: it finds the message types it may emit (the system prompt's tool line, or
// the JSON-mode response schema), reads the chosen type's payload schema from the request, the
// plan rules from the system prompt and the task pack's profiles and patch policy from the
// evidence, and builds its answer from them. Nothing is replayed. It answers `GET /v1/models` and
// `POST /v1/chat/completions` (tool mode and `json_schema` mode), and reports a usage computed
// from each request's size, so a test can sum what the provider said it spent.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

type Json = Record<string, unknown>;

export const SCHEMA_READER_MODEL = "schema-reader";

export interface ReportedUsage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly cached_tokens: number;
  readonly reasoning_tokens: number;
}

export interface SchemaReaderCall {
  readonly body: Json;
  /** The message type it emitted and the payload it built. */
  readonly type: string;
  readonly payload: unknown;
  readonly usage: ReportedUsage;
}

export interface SchemaReadingServer {
  readonly url: string;
  readonly calls: SchemaReaderCall[];
  /** Requests it could not answer from what they said (the test fails on any). */
  readonly failures: string[];
  close(): Promise<void>;
}

/** The types an answer may emit, most useful first. */
const PREFERENCE = ["Plan", "Verdict", "Result", "Finding", "DeadEnd", "Question"];

const isObject = (v: unknown): v is Json =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** A value the schema accepts, from the schema alone (first enum value, required properties only). */
export function instanceOf(schema: unknown): unknown {
  if (!isObject(schema)) return null;
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const branches = (schema.anyOf ?? schema.oneOf) as unknown[] | undefined;
  if (Array.isArray(branches)) {
    const branch = branches.find((b) => !(isObject(b) && b.type === "null")) ?? branches[0];
    return instanceOf(branch);
  }
  const type = Array.isArray(schema.type)
    ? (schema.type as string[]).find((t) => t !== "null")
    : schema.type;
  switch (type) {
    case "object": {
      const props = isObject(schema.properties) ? schema.properties : {};
      const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
      return Object.fromEntries(required.map((k) => [k, instanceOf(props[k])]));
    }
    case "array":
      return Array.from({ length: Number(schema.minItems ?? 0) }, () => instanceOf(schema.items));
    case "string":
      return "read from the request".padEnd(Number(schema.minLength ?? 0), ".");
    case "integer":
    case "number":
      return Number(schema.minimum ?? 0);
    case "boolean":
      return false;
    default:
      return null;
  }
}

function must<T>(value: T | undefined | null, what: string): T {
  if (value === undefined || value === null) throw new Error(`the request does not say ${what}`);
  return value;
}

/** A path a glob of the patch policy matches: `**` and `*` filled with names of our own. */
function pathFor(glob: string): string {
  return glob.replaceAll("**", "notes").replaceAll("*", "file").replaceAll("?", "x");
}

/** A Plan from the request alone: the payload schema, the rules of the prompt, the pack's facts. */
function planFrom(schema: Json, system: string, evidence: string): unknown {
  const props = must(schema.properties as Json | undefined, "the Plan's properties");
  const step = must(
    (props.steps as Json | undefined)?.items as Json | undefined,
    "a step's schema",
  );
  const stepProps = must(step.properties as Json | undefined, "a step's properties");
  const actions = must(
    (stepProps.action as Json | undefined)?.enum as string[] | undefined,
    "the actions",
  );
  const observe = must(
    /The first step is an observation: action "([^"]+)"/.exec(system)?.[1],
    "which action observes",
  );
  const patch = must(
    /- "([^"]+)": path plus exactly one of diff .* or content/.exec(system)?.[1],
    "how to patch",
  );
  if (!actions.includes(observe) || !actions.includes(patch))
    throw new Error("the rules name actions the schema lacks");
  for (const key of ["id", "profile", "args", "path", "content"])
    must(stepProps[key], `a step's ${key}`);
  const profile = must(
    /^- ([a-z][a-z0-9-]*) \(observation\): argv .*, args schema (\{.*\})$/m.exec(evidence),
    "an observation profile",
  );
  const policy = must(
    /^Patch policy: files matching ([^;]+); at most (\d+) bytes\.$/m.exec(evidence),
    "the patch policy",
  );
  const glob = must(policy[1]?.split(", ")[0], "a patch glob");
  const plan: Json = {
    hypothesis:
      "The request says what can be observed and what may change; observe first, then change an allowed file.",
    steps: [
      {
        id: "observe-1",
        action: observe,
        profile: profile[1],
        args: instanceOf(JSON.parse(profile[2] ?? "{}")),
      },
      {
        id: "patch-1",
        action: patch,
        path: pathFor(glob),
        content: "written from what the request said\n",
      },
    ],
  };
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
  for (const key of required) must(plan[key], `the Plan's ${key}`);
  return plan;
}

function textOf(m: unknown): string {
  const content = isObject(m) ? m.content : undefined;
  return typeof content === "string" ? content : "";
}

/** The payload schema of each type the request lets the model emit. */
function offered(body: Json, system: string): Map<string, Json> {
  const out = new Map<string, Json>();
  const format = body.response_format as Json | undefined;
  if (format !== undefined) {
    const turn = ((format.json_schema as Json | undefined)?.schema ?? {}) as Json;
    const message = ((turn.properties as Json | undefined)?.message ?? {}) as Json;
    for (const branch of (message.anyOf as Json[] | undefined) ?? []) {
      const p = branch.properties as Json | undefined;
      const type = (p?.type as Json | undefined)?.const;
      if (typeof type === "string") out.set(type, p?.payload as Json);
    }
    return out;
  }
  const named = must(
    /The tools named (.+?) each emit that message/.exec(system)?.[1],
    "which tools emit a message",
  );
  const tools =
    (body.tools as { function: { name: string; parameters: Json } }[] | undefined) ?? [];
  for (const type of named.split(", ")) {
    const tool = tools.find((t) => t.function.name === type);
    if (tool !== undefined) out.set(type, tool.function.parameters);
  }
  return out;
}

function answer(body: Json, rawLength: number, n: number): { reply: Json; call: SchemaReaderCall } {
  const messages = (body.messages as unknown[] | undefined) ?? [];
  const system = textOf(messages[0]);
  const evidence = textOf(messages.find((m) => isObject(m) && m.role === "user"));
  const types = offered(body, system);
  const type = must(
    PREFERENCE.find((t) => types.has(t)),
    "a message type this model can emit",
  );
  const schema = types.get(type) as Json;
  const payload = type === "Plan" ? planFrom(schema, system, evidence) : instanceOf(schema);
  const json = body.response_format !== undefined;
  const text = json
    ? JSON.stringify({
        kind: "message",
        summary: `${type} from the request`,
        tool_calls: [],
        message: { type, payload, paper_ref: null },
      })
    : JSON.stringify(payload);
  const prompt = Math.ceil(rawLength / 4);
  const usage: ReportedUsage = {
    prompt_tokens: prompt,
    completion_tokens: Math.ceil(text.length / 4) + 7,
    // A later call finds its prefix (the system prompt) in the server's cache; some output is
    // reasoning.
    cached_tokens: n > 0 ? Math.floor(prompt / 3) : 0,
    reasoning_tokens: 7,
  };
  const message = json
    ? { role: "assistant", content: text, refusal: null }
    : {
        role: "assistant",
        content: null,
        refusal: null,
        tool_calls: [
          { id: `call_${n}`, type: "function", function: { name: type, arguments: text } },
        ],
      };
  return {
    call: { body, type, payload, usage },
    reply: {
      id: `chatcmpl-reader-${n}`,
      object: "chat.completion",
      created: 1_764_000_000 + n,
      model: SCHEMA_READER_MODEL,
      choices: [{ index: 0, message, finish_reason: json ? "stop" : "tool_calls" }],
      usage: {
        prompt_tokens: usage.prompt_tokens,
        completion_tokens: usage.completion_tokens,
        total_tokens: usage.prompt_tokens + usage.completion_tokens,
        prompt_tokens_details: { cached_tokens: usage.cached_tokens },
        completion_tokens_details: { reasoning_tokens: usage.reasoning_tokens },
      },
    },
  };
}

export async function startSchemaReadingServer(): Promise<SchemaReadingServer> {
  const calls: SchemaReaderCall[] = [];
  const failures: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const send = (status: number, value: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(value));
      };
      if (req.method === "GET" && req.url === "/v1/models") {
        send(200, { object: "list", data: [{ id: SCHEMA_READER_MODEL, object: "model" }] });
        return;
      }
      if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
        send(404, { error: { message: "no such route" } });
        return;
      }
      const raw = Buffer.concat(chunks).toString("utf8");
      try {
        const { reply, call } = answer(JSON.parse(raw) as Json, raw.length, calls.length);
        calls.push(call);
        send(200, reply);
      } catch (e) {
        failures.push((e as Error).message);
        res.writeHead(400, { "content-type": "application/json", "x-should-retry": "false" });
        res.end(JSON.stringify({ error: { message: (e as Error).message } }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    failures,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((e) => (e === undefined ? resolve() : reject(e)));
      }),
  };
}
