// The agent definition in its stored (usual) form: alternate spellings rewritten, optional properties
// that were null removed, graph nodes and edges filled. It follows agent-definition.v1.schema.json
// (test/contract-types.test.ts checks it against the generated type); its unions are the generated ones.
import type * as Wire from "../contracts/types/agent-definition.v1.js";

export type McpTransport = Wire.McpTransport;
export type MemoryScopeKind = Wire.MemoryScopeKind;
export type PromptRole = Wire.Prompt["role"];

export interface Framework {
  readonly name: string;
  readonly packages?: Readonly<Record<string, string>>;
}

export interface Thinking {
  readonly type: string;
  readonly budgetTokens?: number;
}

export interface Reasoning {
  readonly effort?: string;
  readonly summary?: string;
}

export interface ModelSettings {
  readonly betas?: readonly string[];
  readonly effort?: string;
  readonly frequencyPenalty?: number;
  readonly maxCompletionTokens?: number;
  readonly maxTokens?: number;
  readonly presencePenalty?: number;
  readonly reasoning?: Reasoning;
  readonly reasoningEffort?: string;
  readonly seed?: number;
  readonly serviceTier?: string;
  readonly stop?: readonly string[];
  readonly temperature?: number;
  readonly thinking?: Thinking;
  readonly topK?: number;
  readonly topP?: number;
}

export interface Model {
  readonly provider: string;
  readonly model: string;
  readonly settings?: ModelSettings;
}

export interface Prompt {
  readonly role: PromptRole;
  readonly content?: string;
  readonly contentCid?: string;
}

export interface Skill {
  readonly name: string;
  readonly cid: string;
}

export interface Source {
  readonly path: string;
  readonly sha256: string;
}

export interface Tool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
  readonly sourceHash?: string;
}

export interface McpServer {
  readonly name: string;
  readonly transport: McpTransport;
  readonly command?: string;
  readonly args?: readonly string[];
  readonly url?: string;
}

export interface MemoryScope {
  readonly kind: MemoryScopeKind;
  readonly sourceHash?: string;
}

export interface Memory {
  readonly path: string;
  readonly backend: string;
  readonly writable: boolean;
  readonly cid?: string;
  readonly scope?: MemoryScope;
}

export interface Middleware {
  readonly name: string;
  readonly config?: Readonly<Record<string, unknown>>;
  readonly sourceHash?: string;
}

/** An edge as [source, target, conditional]. */
export type Edge = readonly [string, string, boolean];

export interface Graph {
  readonly nodes: readonly string[];
  readonly edges: readonly Edge[];
}

export interface AgentDefinition {
  readonly schema: "viper/agent-definition/v1";
  readonly name: string;
  readonly framework: Framework;
  readonly models: readonly Model[];
  readonly description?: string;
  readonly extensions?: Readonly<Record<string, unknown>>;
  readonly graph?: Graph;
  readonly guardrails?: readonly string[];
  readonly mcpServers?: readonly McpServer[];
  readonly memory?: readonly Memory[];
  readonly middleware?: readonly Middleware[];
  readonly permissions?: readonly string[];
  readonly prompts?: readonly Prompt[];
  readonly skills?: readonly Skill[];
  readonly sources?: readonly Source[];
  readonly subAgents?: readonly AgentDefinition[];
  readonly tools?: readonly Tool[];
  readonly version?: string;
}
