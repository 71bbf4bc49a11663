// The DefinitionFiles port over the file system: an agent definition's skills and read-only memory
// found beside its file (or under `--skills` folders), their collection CIDs recomputed and compared
// with the definition's before any passage, and skill files read later only when their bytes still
// hash as verified. Paths from a definition are hostile: absolute paths, `..`, NUL and links that
// leave the definition's folder are refused.
import { open, readFile, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { blake3Digest } from "../../core/cid/cid.js";
import { collectionCidFromHashes } from "../../core/cid/collection.js";
import { skillFrontMatter } from "../../core/definition/skill-front-matter.js";
import { fail, ok, type Problem, type Result } from "../../core/result.js";
import type { AgentSite } from "../../runtime/agent-site.js";
import type {
  DefinitionFiles,
  PreparedMemory,
  PreparedParts,
  PreparedSkill,
  SkillFileText,
} from "../../runtime/definition-parts.js";
import { collectionFiles, hashedCollectionOfPath } from "./collection-files.js";

/** Read-only memory carried in a system prompt: at most this many bytes per agent. */
export const MAX_MEMORY_BYTES = 64 * 1024;
/** A skill file is verified whole before it is read: at most this many bytes. */
const MAX_SKILL_FILE_BYTES = 4 * 1024 * 1024;

const utf8 = new TextDecoder("utf-8", { fatal: true });
const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

function problem(code: string, at: string, message: string): Problem {
  return { code, path: at, message };
}

/** A relative path with no `..`, no empty or absolute start, no backslash or NUL. */
function safeRelative(p: string): boolean {
  if (p === "" || p.includes("\0") || p.includes("\\") || path.isAbsolute(p)) return false;
  return p.split("/").every((s) => s !== "..");
}

async function isDir(p: string): Promise<boolean> {
  return (await stat(p).catch(() => undefined))?.isDirectory() === true;
}

/** `inner` (after links) is `outer` or inside it. */
async function within(outer: string, inner: string): Promise<boolean> {
  const [o, i] = await Promise.all([realpath(outer), realpath(inner)]);
  return i === o || i.startsWith(o + path.sep);
}

async function prepareSkill(
  site: AgentSite,
  index: number,
  skillDirs: readonly string[],
): Promise<Result<PreparedSkill>> {
  const skill = site.definition.skills?.[index];
  const at = `${site.pointer}/skills/${index}`;
  if (skill === undefined) return fail([problem("definition/skill-missing", at, "no such skill")]);
  const { name, cid } = skill;
  if (name === "." || name.includes("/") || !safeRelative(name)) {
    return fail([
      problem("definition/skill-name", at, `skill ${JSON.stringify(name)} is not a folder name`),
    ]);
  }
  const roots = [path.join(path.dirname(site.file), "skills"), ...skillDirs];
  let dir: string | undefined;
  for (const root of roots) {
    if (await isDir(path.join(root, name))) {
      dir = path.join(root, name);
      break;
    }
  }
  if (dir === undefined) {
    return fail([
      problem(
        "definition/skill-missing",
        at,
        `skill ${name}: no folder ${name}/ under ${roots.join(", ")}`,
      ),
    ]);
  }
  const collection = await hashedCollectionOfPath(dir);
  if (collection.cid !== cid) {
    return fail([
      problem(
        "definition/skill-cid-mismatch",
        `${at}/cid`,
        `skill ${name}: the files of ${dir} have CID ${collection.cid}, the definition says ${cid}`,
      ),
    ]);
  }
  const skillMd = collection.paths.get("SKILL.md");
  const text = skillMd === undefined ? "" : await readFile(skillMd, "utf8").catch(() => "");
  return ok({
    name,
    cid,
    description: skillFrontMatter(text).description ?? "",
    dir,
    files: collection.hashes,
  });
}

/** A read-only memory's bytes (a file, or each file of a folder), its CID over those very bytes. */
async function prepareMemory(site: AgentSite, index: number): Promise<Result<PreparedMemory>> {
  const memory = site.definition.memory?.[index];
  const at = `${site.pointer}/memory/${index}`;
  if (memory === undefined || memory.cid === undefined) {
    return fail([problem("definition/memory-missing", at, "no read-only memory here")]);
  }
  const { cid } = memory;
  const rel = memory.path.endsWith("/") ? memory.path.slice(0, -1) : memory.path;
  const base = path.dirname(site.file);
  if (!safeRelative(rel)) {
    return fail([
      problem(
        "definition/memory-path",
        `${at}/path`,
        `memory ${memory.path}: not a path inside the definition's folder`,
      ),
    ]);
  }
  const target = path.join(base, rel);
  const info = await stat(target).catch(() => undefined);
  if (info === undefined || (!info.isFile() && !info.isDirectory())) {
    return fail([
      problem(
        "definition/memory-missing",
        `${at}/path`,
        `memory ${memory.path}: no such file or folder beside ${site.file}`,
      ),
    ]);
  }
  if (!(await within(base, target))) {
    return fail([
      problem(
        "definition/memory-path",
        `${at}/path`,
        `memory ${memory.path} leads outside the definition's folder`,
      ),
    ]);
  }
  const files = info.isFile()
    ? [{ name: path.basename(target), path: target }]
    : await collectionFiles(target);
  let total = 0;
  for (const f of files) total += (await stat(f.path)).size;
  if (total > MAX_MEMORY_BYTES) {
    return fail([
      problem(
        "definition/memory-too-large",
        `${at}/path`,
        `memory ${memory.path} holds ${total} bytes; a prompt carries at most ${MAX_MEMORY_BYTES}`,
      ),
    ]);
  }
  const contents = await Promise.all(files.map((f) => readFile(f.path)));
  const found = collectionCidFromHashes(
    files.map((f, i) => ({ name: f.name, hash: blake3Digest(contents[i] as Uint8Array) })),
  );
  if (found !== cid) {
    return fail([
      problem(
        "definition/memory-cid-mismatch",
        `${at}/cid`,
        `memory ${memory.path}: its files have CID ${found}, the definition says ${cid}`,
      ),
    ]);
  }
  const texts: string[] = [];
  for (const [i, f] of files.entries()) {
    let text: string;
    try {
      text = utf8.decode(contents[i] as Uint8Array);
    } catch {
      return fail([
        problem(
          "definition/memory-not-text",
          `${at}/path`,
          `memory ${memory.path}: ${f.name} is not UTF-8 text`,
        ),
      ]);
    }
    texts.push(info.isFile() ? text : `### ${f.name}\n\n${text}`);
  }
  return ok({ path: memory.path, cid, text: texts.join("\n\n") });
}

async function prepare(
  site: AgentSite,
  skillDirs: readonly string[],
): Promise<Result<PreparedParts>> {
  const problems: Problem[] = [];
  const skills: PreparedSkill[] = [];
  const memory: PreparedMemory[] = [];
  for (const i of (site.definition.skills ?? []).keys()) {
    const r = await prepareSkill(site, i, skillDirs);
    if (r.ok) skills.push(r.value);
    else problems.push(...r.errors);
  }
  for (const [i, m] of (site.definition.memory ?? []).entries()) {
    if (m.writable) continue;
    const r = await prepareMemory(site, i);
    if (r.ok) memory.push(r.value);
    else problems.push(...r.errors);
  }
  return problems.length > 0 ? fail(problems) : ok({ skills, memory });
}

async function readSkillFile(
  skill: PreparedSkill,
  rel: string,
  maxBytes: number,
): Promise<Result<SkillFileText>> {
  const name = rel.startsWith("./") ? rel.slice(2) : rel;
  const expected = skill.files.get(name);
  if (!safeRelative(name) || expected === undefined) {
    return fail([
      problem("skill/not-found", "/path", `skill ${skill.name} has no file ${JSON.stringify(rel)}`),
    ]);
  }
  const file = path.join(skill.dir, name);
  let bytes: Uint8Array;
  try {
    const handle = await open(file, "r");
    try {
      const { size } = await handle.stat();
      if (size > MAX_SKILL_FILE_BYTES) {
        return fail([
          problem(
            "skill/too-large",
            "/path",
            `${name} holds ${size} bytes; at most ${MAX_SKILL_FILE_BYTES} are read`,
          ),
        ]);
      }
      bytes = new Uint8Array(size);
      let filled = 0;
      while (filled < size) {
        const { bytesRead } = await handle.read(bytes, filled, size - filled, null);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      bytes = bytes.subarray(0, filled);
    } finally {
      await handle.close();
    }
  } catch {
    return fail([
      problem("skill/not-found", "/path", `skill ${skill.name}: ${name} cannot be read`),
    ]);
  }
  if (hex(blake3Digest(bytes)) !== expected) {
    return fail([
      problem(
        "definition/skill-cid-mismatch",
        "/path",
        `skill ${skill.name}: ${name} changed since its CID was verified`,
      ),
    ]);
  }
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return fail([
      problem("skill/not-text", "/path", `skill ${skill.name}: ${name} is not UTF-8 text`),
    ]);
  }
  const encoded = new TextEncoder().encode(text);
  if (encoded.length <= maxBytes) return ok({ text, truncated: false });
  const cut = new TextDecoder("utf-8").decode(encoded.subarray(0, maxBytes)).replace(/\uFFFD$/, "");
  return ok({ text: cut, truncated: true });
}

export function createDefinitionFiles(): DefinitionFiles {
  return { prepare, readSkillFile };
}
