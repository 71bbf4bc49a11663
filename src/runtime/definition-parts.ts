// The content-addressed parts of an agent definition as a passage uses them, once verified: each
// skill's folder with the hash of every file its CID covers, and each read-only memory's text. The
// DefinitionFiles port reads them (src/adapters/fs/definition-files.ts); nothing here does I/O.
import type { Result } from "../core/result.js";
import type { AgentSite } from "./agent-site.js";

export interface PreparedSkill {
  readonly name: string;
  readonly cid: string;
  /** From SKILL.md's front matter ("" when it states none). */
  readonly description: string;
  /** Where the skill's folder is on this machine. */
  readonly dir: string;
  /** BLAKE3-256 (hex) of every file the CID covers, by `/`-separated name. */
  readonly files: ReadonlyMap<string, string>;
}

export interface PreparedMemory {
  readonly path: string;
  readonly cid: string;
  /** The memory as the system prompt carries it (a folder's files one after another). */
  readonly text: string;
}

/** One agent's verified parts. */
export interface PreparedParts {
  readonly skills: readonly PreparedSkill[];
  readonly memory: readonly PreparedMemory[];
}

export interface SkillFileText {
  readonly text: string;
  readonly truncated: boolean;
}

export interface DefinitionFiles {
  /**
   * Finds each skill (`skills/<name>/` beside the definition file, then under each of `skillDirs`)
   * and each read-only memory (its `path` beside the definition file), recomputes their collection
   * CIDs and reads what the prompt needs. Refusals: `definition/skill-missing`,
   * `definition/skill-cid-mismatch`, `definition/memory-missing`, `definition/memory-path`,
   * `definition/memory-cid-mismatch`, `definition/memory-too-large`, `definition/memory-not-text`,
   * each naming the part.
   */
  prepare(site: AgentSite, skillDirs: readonly string[]): Promise<Result<PreparedParts>>;
  /**
   * A file of a verified skill (`SKILL.md` when `path` is absent), confined to its folder, and
   * only a file its CID covers, whose bytes still hash as they did when it was verified.
   */
  readSkillFile(
    skill: PreparedSkill,
    path: string,
    maxBytes: number,
  ): Promise<Result<SkillFileText>>;
}
