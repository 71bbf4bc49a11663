// The preflight's definitions check: each role's agent definition as it will run (SPEC-free parts
// the definition names): the models it calls can be made (provider, base URL, script), skills and
// read-only memory match their CIDs, middleware is one Warrant runs with a config it reads,
// namespace-scoped memory has a namespace, and each sub-agent the same. A setting a provider cannot
// honour is a note (a warning), never a problem. Declared tools are bound when the run offers its
// tools (Warrant.checkDefinitions), not here.
import { createDefinitionFiles } from "../adapters/fs/definition-files.js";
import { ROLES } from "../core/loop/types.js";
import { rootSite } from "../runtime/agent-site.js";
import { preflightAgent } from "../runtime/definition-preflight.js";
import { definitionModelUri } from "./definition-models.js";
import type { CheckProblem, PreflightCheck } from "./preflight-types.js";

export const DEFINITION_CHECK: PreflightCheck = {
  name: "definitions",
  async run(subject) {
    const { pack, env } = subject;
    const files = createDefinitionFiles();
    const problems: CheckProblem[] = [];
    const notes: string[] = [];
    const namespace = subject.namespace ?? pack.pack.memoryNamespace;
    for (const role of ROLES) {
      const agent = pack.agents[role];
      if (agent === undefined) continue;
      const override = (subject.overrides ?? subject.models)[role];
      const report = await preflightAgent(rootSite(agent), {
        files,
        skillDirs: subject.skills ?? [],
        modelUri: (model, site) =>
          definitionModelUri(model, site, {
            env,
            compatibleBaseUrl: pack.pack.openaiCompatibleBaseUrl,
          }),
        ...(override === undefined ? {} : { override }),
        ...(namespace === undefined ? {} : { namespace }),
      });
      for (const p of report.problems)
        problems.push({ ...p, path: `/agents/${role}${p.path}`, message: `${role}: ${p.message}` });
      for (const w of report.warnings) notes.push(`${role}: warning: ${w.code}: ${w.message}`);
      if (report.problems.length === 0) notes.push(`${role}: ${report.agent.name} ${agent.id}`);
    }
    return { problems, notes };
  },
};
