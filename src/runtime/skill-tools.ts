// Skills at run time (progressive disclosure, as coding agents use agent skills): the system prompt
// lists each verified skill's name and description; the observation tool `skill.read {name, path?}`
// returns its SKILL.md, or a file of its folder that the skill refers to, confined to that folder
// and to the files its CID covers.
import { type ToolHost, toolAnswer, toolFailure } from "../core/ports/tool-host.js";
import type { ToolSpec } from "../core/turn/tool-registry.js";
import type { DefinitionFiles, PreparedSkill } from "./definition-parts.js";

export const SKILL_READ = "skill.read";
/** The most text one `skill.read` returns. */
const MAX_SKILL_READ_BYTES = 64 * 1024;

/** The system prompt's section on skills (empty when the agent has none). */
export function skillsPrompt(skills: readonly PreparedSkill[]): string {
  if (skills.length === 0) return "";
  const lines = skills.map((s) => `- ${s.name}${s.description === "" ? "" : `: ${s.description}`}`);
  return [
    `Skills (read one with ${SKILL_READ} {"name": …}; a file it refers to with {"name": …, "path": …}):`,
    ...lines,
  ].join("\n");
}

function spec(skills: readonly PreparedSkill[]): ToolSpec {
  return {
    name: SKILL_READ,
    description:
      "Read a skill's SKILL.md, or a file of the skill's folder that it refers to (a path relative to that folder).",
    inputSchema: {
      type: "object",
      properties: {
        name: { type: "string", enum: skills.map((s) => s.name) },
        path: { type: "string", minLength: 1 },
      },
      required: ["name"],
      additionalProperties: false,
    },
    effect: "observation",
  };
}

/** `skill.read` over an agent's verified skills; no tool at all when it has none. */
export function skillTools(skills: readonly PreparedSkill[], files: DefinitionFiles): ToolHost {
  const specs = skills.length === 0 ? [] : [spec(skills)];
  return {
    specs: () => specs,
    async call(name, args) {
      if (name !== SKILL_READ || skills.length === 0)
        return toolFailure("tool/unknown", `no tool named ${name}`);
      const skill = skills.find((s) => s.name === args.name);
      if (skill === undefined)
        return toolFailure("skill/not-found", `no skill ${JSON.stringify(args.name)}`);
      const rel = typeof args.path === "string" ? args.path : "SKILL.md";
      const read = await files.readSkillFile(skill, rel, MAX_SKILL_READ_BYTES);
      if (!read.ok) {
        const p = read.errors[0];
        return toolFailure(
          p?.code ?? "skill/not-found",
          p?.message ?? "cannot read the skill file",
        );
      }
      const { text, truncated } = read.value;
      return toolAnswer(truncated ? `${text}\n[cut at ${MAX_SKILL_READ_BYTES} bytes]` : text);
    },
  };
}
