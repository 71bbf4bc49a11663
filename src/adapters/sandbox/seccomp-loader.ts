// The seccomp loader the unshare backend runs its commands under (util-linux cannot load a filter):
// `warrant-seccomp`, a small C program built from native/seccomp-exec.c by `npm run build` where a
// C compiler is present and shipped in dist/native. It sets no_new_privs, loads the program
// seccomp-filter.ts writes, and executes the rest of its command line. Whether it works here is
// proven once per sandbox by loading the filter in front of `true` on the host.
import { hostCommand } from "./host-command.js";
import { builtNativeProgram } from "./native-program.js";
import {
  DENIED_SOCKET_FAMILIES,
  DENIED_SYSCALLS,
  filterArch,
  seccompProgram,
} from "./seccomp-filter.js";

/** The loader shipped with this package, when it was built. */
export function defaultSeccompLoader(): string | undefined {
  return builtNativeProgram("warrant-seccomp");
}

/** The loader's path, or why commands cannot run under the filter here. */
export type LoaderStatus = { readonly path: string } | { readonly why: string };

/**
 * Whether `loader` (default: the shipped one; null: none) loads the filter on this host: proven by
 * running `loader - true` with the program on stdin.
 */
export async function checkSeccompLoader(loader: string | null | undefined): Promise<LoaderStatus> {
  const arch = filterArch();
  if (arch === undefined) return { why: `no filter is written for ${process.arch}` };
  const path = loader === undefined ? defaultSeccompLoader() : loader;
  if (path === undefined || path === null)
    return {
      why: "its seccomp loader (warrant-seccomp) was not built: no C compiler at build time",
    };
  try {
    await hostCommand("sandbox/no-seccomp", [path, "-", "true"], { stdin: seccompProgram(arch) });
    return { path };
  } catch (e) {
    return { why: `its seccomp loader does not work here: ${(e as Error).message}` };
  }
}

/** What commands can reach without the filter, for the refusal and the warning. */
export function openWithoutFilter(): string {
  const families = Object.keys(DENIED_SOCKET_FAMILIES).join(", ");
  return `${DENIED_SYSCALLS.join(", ")} and ${families} sockets are open to commands`;
}
