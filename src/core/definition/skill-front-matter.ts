// The front matter of a skill's SKILL.md (agent skills: a `---` block of `key: value` lines at the
// top of the file): its name and description, which the system prompt lists. Only plain scalars,
// quoted strings and folded or literal blocks (`>` / `|`) are read; anything else is left alone.

export interface SkillFrontMatter {
  readonly name?: string;
  readonly description?: string;
}

function unquote(v: string): string {
  const t = v.trim();
  if (
    t.length >= 2 &&
    ((t.startsWith('"') && t.endsWith('"')) || (t.startsWith("'") && t.endsWith("'")))
  ) {
    return t.slice(1, -1);
  }
  return t;
}

/** The front matter's fields, or none when the file does not open with a `---` block. */
export function skillFrontMatter(text: string): SkillFrontMatter {
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  if (lines[0]?.trim() !== "---") return {};
  const end = lines.findIndex((l, i) => i > 0 && l.trim() === "---");
  if (end < 0) return {};
  const fields: Record<string, string> = {};
  for (let i = 1; i < end; i++) {
    const line = lines[i] as string;
    const m = /^([A-Za-z_][A-Za-z0-9_-]*):\s*(.*)$/.exec(line);
    if (m === null) continue;
    const key = m[1] as string;
    const value = (m[2] as string).trim();
    if (value === ">" || value === "|" || value === ">-" || value === "|-") {
      const block: string[] = [];
      while (i + 1 < end && /^\s+\S/.test(lines[i + 1] as string))
        block.push((lines[++i] as string).trim());
      fields[key] = block.join(value.startsWith(">") ? " " : "\n");
    } else {
      fields[key] = unquote(value);
    }
  }
  return {
    ...(fields.name === undefined ? {} : { name: fields.name }),
    ...(fields.description === undefined ? {} : { description: fields.description }),
  };
}
