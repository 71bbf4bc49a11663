// The `cid` command group (docs/spec/cli.md): BLAKE3 CIDs of a blob file and of a collection directory.
import { stat } from "node:fs/promises";
import type { Command } from "commander";
import { collectionCidOfPath } from "../../library/folder-cid.js";
import { blobCid } from "../../library/pure.js";
import {
  EXIT_OK,
  maxBytesOf,
  out,
  printJson,
  readInputFile,
  UsageError,
  withMaxBytes,
} from "../io.js";

function print(cid: string, opts: { json?: boolean }): void {
  if (opts.json === true) printJson({ cid });
  else out(cid);
  process.exitCode = EXIT_OK;
}

export function registerCidCommands(program: Command): void {
  const group = program.command("cid").description("content IDs of files (BLAKE3-256, CIDv1)");

  withMaxBytes(group.command("blob"))
    .description("the raw-codec CID of one file's bytes (a prompt's contentCid)")
    .argument("<file>", "the file")
    .option("--json", "print {cid}")
    .action((file: string, opts: { json?: boolean; maxBytes?: string }) => {
      print(blobCid(readInputFile(file, maxBytesOf(opts))), opts);
    });

  group
    .command("collection")
    .description(
      "the iroh collection CID of a directory (a skill, immutable memory): every regular file, " +
        "hidden ones included, symlinks inside skipped; a single file is a collection of one",
    )
    .argument("<dir>", "the directory (or a single file)")
    .option("--json", "print {cid}")
    .action(async (dir: string, opts: { json?: boolean }) => {
      try {
        await stat(dir);
      } catch {
        throw new UsageError(`cannot read ${dir}: no such file or directory`);
      }
      print(await collectionCidOfPath(dir), opts);
    });
}
