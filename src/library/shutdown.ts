// What a process does with its sandboxes when it must stop now (SIGTERM, SIGINT): every
// environment it still holds is destroyed (what runs in it killed) and every baseline it pinned is
// removed, so that nothing of it is left in the temp directory. The loop's facts are untouched: a
// later `resume` concludes the interrupted run as usual.
import { destroyHeldEnvironments } from "../adapters/sandbox/managed-environment.js";

/** Destroy every environment and pin this process holds; resolves once each is done. */
export function releaseSandboxes(): Promise<void> {
  return destroyHeldEnvironments();
}
