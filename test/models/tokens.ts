// A Usage in one line, for the expectations of adapter tests.
import type { Usage } from "../../src/core/ports/model-provider.js";

export function tokens(input: number, output: number, cached = 0, reasoning = 0): Usage {
  return {
    inputTokens: input,
    outputTokens: output,
    cachedInputTokens: cached,
    reasoningTokens: reasoning,
  };
}
