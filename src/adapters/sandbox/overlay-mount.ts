// Mounting an environment's overlay inside the command's own user and mount namespaces (kernel
// overlayfs, unprivileged since Linux 5.11 with `userxattr`), and proving once per sandbox that
// this host allows it — mount, copy-up, whiteout, opaque directory, and the host reading them —
// before any environment relies on it. Nothing is mounted on the host.
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import path from "node:path";
import type { RunAs } from "./baseline-pin.js";
import { hostCommand } from "./host-command.js";
import { closeQuietly, kindOf, lstatAt, openDirPath } from "./host-fs.js";
import { opaqueDirs } from "./opaque-dirs.js";
import { claimPin, PROBE_DIR_PREFIX } from "./pin-owner.js";
import { removePath } from "./tree-walk.js";

/**
 * The mount options of an overlay, or undefined when a path holds a character the option string
 * cannot carry. `redirect_dir=nofollow`: renaming a lower directory copies it (no redirect attribute
 * to read); `userxattr`: the attributes overlayfs keeps are `user.overlay.*`, which an
 * unprivileged mount may write and the host may read.
 */
export function overlayOptions(lower: string, upper: string, work: string): string | undefined {
  if ([lower, upper, work].some((p) => /[,:\\\s]/.test(p))) return undefined;
  return `userxattr,redirect_dir=nofollow,lowerdir=${lower},upperdir=${upper},workdir=${work}`;
}

export interface NamespaceCommand {
  readonly unsharePath: string;
  readonly setprivPath: string;
  readonly runAs: RunAs | undefined;
}

/** `setpriv` to the commands' uid and gid with no other groups, when there is one to drop to. */
export function setprivPrefix(setprivPath: string, runAs: RunAs | undefined): string[] {
  if (runAs === undefined) return [];
  return [
    setprivPath,
    "--reuid",
    String(runAs.uid),
    "--regid",
    String(runAs.gid),
    "--clear-groups",
    "--",
  ];
}

/** `setpriv` to the commands' uid (when the host is root), then a new user and mount namespace. */
export function namespacePrefix(ns: NamespaceCommand): string[] {
  return [
    ...setprivPrefix(ns.setprivPath, ns.runAs),
    ns.unsharePath,
    "--user",
    "--map-root-user",
    "--mount",
    "--",
  ];
}

/**
 * The command line that mounts the overlay at `target` in fresh namespaces, then each of `more`
 * (over folders inside it, in order), then runs `argv`.
 */
export function mountThen(
  ns: NamespaceCommand,
  options: string,
  target: string,
  argv: readonly string[],
  more: readonly { readonly options: string; readonly target: string }[] = [],
): string[] {
  return [
    ...namespacePrefix(ns),
    "/bin/sh",
    "-c",
    'n=$1; shift; while [ "$n" -gt 0 ]; do mount -t overlay overlay -o "$1" "$2" || exit 125; shift 2; n=$((n-1)); done; exec "$@"',
    "warrant-overlay",
    String(1 + more.length),
    options,
    target,
    ...more.flatMap((m) => [m.options, m.target]),
    ...argv,
  ];
}

/**
 * Why an unprivileged overlay cannot serve environments here, or undefined when it can: the probe
 * mounts one under `tempRoot` as the commands' uid, writes through it, deletes a lower file,
 * replaces a lower directory, and checks that the host reads the whiteout and the opaque mark.
 */
export async function probeOverlay(
  tempRoot: string,
  ns: NamespaceCommand,
): Promise<string | undefined> {
  let base: string;
  try {
    base = await mkdtemp(path.join(tempRoot, `${PROBE_DIR_PREFIX}overlay-`));
  } catch (e) {
    return (e as Error).message;
  }
  try {
    await claimPin(base);
    const p = (n: string) => path.join(base, n);
    for (const d of ["lower", "lower/d", "upper", "work", "merged"]) await mkdir(p(d));
    await writeFile(p("lower/d/x"), "x");
    await writeFile(p("lower/f"), "f");
    if (ns.runAs !== undefined) {
      await hostCommand("sandbox/overlay-probe", [
        "chown",
        "-R",
        `${ns.runAs.uid}:${ns.runAs.gid}`,
        base,
      ]);
    }
    const options = overlayOptions(p("lower"), p("upper"), p("work"));
    if (options === undefined)
      return `the temp root ${tempRoot} has a character mount options cannot carry`;
    await hostCommand(
      "sandbox/overlay-probe",
      mountThen(ns, options, p("merged"), [
        "/bin/sh",
        "-c",
        'cd "$1" && echo y >> d/x && rm f && rm -r d && mkdir d && echo n > d/n',
        "sh",
        p("merged"),
      ]),
    );
    const upper = openDirPath(p("upper"));
    try {
      const f = lstatAt(upper, Buffer.from("f"));
      if (f === undefined || kindOf(f) !== "whiteout")
        return "a deleted lower file left no whiteout";
      const d = openDirPath(p("upper/d"));
      try {
        const [opaque] = await opaqueDirs([d]);
        if (opaque !== true) return "the host cannot read an opaque directory's mark";
      } finally {
        closeQuietly(d);
      }
    } finally {
      closeQuietly(upper);
    }
    return undefined;
  } catch (e) {
    return (e as Error).message;
  } finally {
    await removePath(base);
  }
}
