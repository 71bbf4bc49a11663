// Runs a passage for the driver: the role's model (chosen per role), the agent definition's system
// prompt, no tools beyond the message itself, under the task pack's passage limits; the transcript
// comes back as a record.
import type { Role } from "../core/loop/types.js";
import { WarrantError } from "../core/result.js";
import type { ModelProvider } from "../core/turn/model-provider.js";
import type { TypedMessage } from "../core/turn/payloads.js";
import { createToolRegistry } from "../core/turn/tool-registry.js";
import { type PassageDefinition, runPassage } from "./passage.js";
import { type PassageTranscript, transcriptRecord } from "./passage-transcript.js";
import type { PassageOutcome, PassageRequest, PassageRunner } from "./ports.js";

/**
 * The model for one passage. `priorCalls` is how many model calls this role's earlier, ended
 * passages made: a scripted model starts after them, so a passage redone after a crash replays
 * exactly the answers the interrupted one was given.
 */
export type ModelForPassage = (role: Role, priorCalls: number) => ModelProvider;

const DEFAULT_LIMITS = { maxTurns: 8, maxTokens: 32_000 };

function systemPrompt(role: Role, definition: unknown): string {
  const prompts =
    (definition as { prompts?: readonly { role?: string; content?: string }[] }).prompts ?? [];
  const own = prompts
    .filter((p) => p.role === "system" && typeof p.content === "string")
    .map((p) => p.content as string);
  return [
    `You are the ${role} of a Warrant loop. Answer with exactly one typed message.`,
    ...own,
  ].join("\n\n");
}

export function createAgentPassages(modelFor: ModelForPassage): PassageRunner {
  const registry = createToolRegistry([]);
  if (!registry.ok)
    throw new WarrantError("runtime/registry", "the empty tool registry did not build");
  const noTools = {
    call: async () => ({
      ok: false,
      content: "no tools in this passage",
      isError: true,
      code: "tool/unknown",
    }),
  };
  return {
    async run(request: PassageRequest): Promise<PassageOutcome> {
      const agent = request.pack.agents[request.role];
      const limits = request.pack.pack.passage;
      const outcome = await runPassage({
        role: request.role,
        agentId: request.agentId,
        definition: (agent?.definition ?? {}) as PassageDefinition,
        system: systemPrompt(request.role, agent?.definition ?? {}),
        evidence: request.evidence,
        registry: registry.value,
        toolHost: noTools,
        provider: modelFor(request.role, request.priorCalls),
        limits: {
          maxTurns: limits?.maxTurns ?? DEFAULT_LIMITS.maxTurns,
          maxTokens: limits?.maxTokens ?? DEFAULT_LIMITS.maxTokens,
        },
        ...(limits?.repairs === undefined ? {} : { repairs: limits.repairs }),
      });
      // The transcript names its query and passage: two loops' identical passages are two records.
      const transcript = transcriptRecord(request.query, {
        ...outcome.transcript,
        "query/id": request.query,
        "passage/ref": request.passageRef,
      } as PassageTranscript);
      const modelCalls = outcome.transcript.usage.modelCalls;
      if (!outcome.ok)
        return { ok: false, code: outcome.code, message: outcome.message, transcript, modelCalls };
      const message = {
        type: outcome.message.type,
        payload: outcome.message.payload,
      } as TypedMessage;
      return { ok: true, message, transcript, modelCalls };
    },
  };
}
