// Skills read at run time stay what was verified: skill.read is confined to the skill's folder and
// to the files its CID covers, and a file edited after verification is refused, not read. SKILL.md's
// front matter gives the description the system prompt lists.
import { symlinkSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createDefinitionFiles } from "../../src/adapters/fs/definition-files.js";
import { skillFrontMatter } from "../../src/core/definition/skill-front-matter.js";
import type { AgentDefinition } from "../../src/core/definition/types.js";
import { skillTools } from "../../src/runtime/skill-tools.js";
import { definition, folder } from "./fixture.js";

async function prepared() {
  const w = folder();
  w.write(
    "agents/skills/notes/SKILL.md",
    "---\nname: notes\ndescription: >\n  Folded\n  text.\n---\nSee reference.md.\n",
  );
  w.write("agents/skills/notes/reference.md", "ref\n");
  w.write("agents/secret.txt", "secret\n");
  symlinkSync(w.file("agents/secret.txt"), w.file("agents/skills/notes/link.txt"));
  const d = definition("a", {
    models: [{ provider: "scripted", model: "x" }],
    skills: [{ name: "notes", cid: await w.cid("agents/skills/notes") }],
  }) as unknown as AgentDefinition;
  const files = createDefinitionFiles();
  const parts = await files.prepare(
    { id: "agent:x", definition: d, file: w.file("agents/a.json"), pointer: "" },
    [],
  );
  if (!parts.ok) throw new Error(JSON.stringify(parts.errors));
  const host = skillTools(parts.value.skills, files);
  const read = async (args: Record<string, unknown>) => host.call("skill.read", args);
  return { w, parts: parts.value, read };
}

describe("skills at run time", () => {
  it("reads SKILL.md by default and a file of the folder by its path; the description comes from the front matter", async () => {
    const { parts, read } = await prepared();
    expect(parts.skills[0]?.description).toBe("Folded text.");
    expect(await read({ name: "notes" })).toMatchObject({
      ok: true,
      content: expect.stringContaining("See reference.md."),
    });
    expect(await read({ name: "notes", path: "reference.md" })).toMatchObject({
      ok: true,
      content: "ref\n",
    });
    expect(await read({ name: "notes", path: "./reference.md" })).toMatchObject({ ok: true });
  });

  it("refuses a path out of the folder, a link inside it (links are not in the CID), and an unknown skill", async () => {
    const { read } = await prepared();
    for (const path of ["../secret.txt", "/etc/passwd", "link.txt", "reference.md/..", "sub\\x"]) {
      expect(await read({ name: "notes", path })).toMatchObject({
        ok: false,
        code: "skill/not-found",
      });
    }
    expect(await read({ name: "other" })).toMatchObject({ ok: false, code: "skill/not-found" });
  });

  it("refuses a file edited after its CID was verified", async () => {
    const { w, read } = await prepared();
    w.write("agents/skills/notes/reference.md", "edited\n");
    expect(await read({ name: "notes", path: "reference.md" })).toMatchObject({
      ok: false,
      code: "definition/skill-cid-mismatch",
    });
  });

  it("front matter: quoted values, literal blocks, and files without it", () => {
    expect(skillFrontMatter("---\nname: \"n\"\ndescription: 'd: e'\n---\n")).toEqual({
      name: "n",
      description: "d: e",
    });
    expect(skillFrontMatter("---\ndescription: |\n  a\n  b\n---\n").description).toBe("a\nb");
    expect(skillFrontMatter("# no front matter\n")).toEqual({});
    expect(skillFrontMatter("---\ndescription: never closed\n")).toEqual({});
  });
});
