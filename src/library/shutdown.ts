// What a process does with its sandboxes when it must stop now (SIGTERM, SIGINT): every
// environment it still holds is destroyed (what runs in it killed) and every baseline it pinned is
// removed, so that nothing of it is left in the temp directory. The loop's facts are untouched: a
// later `resume` concludes the interrupted run as usual.

/**
 * Destroy every environment and pin this process holds; resolves once each is done. The sandbox is
 * loaded here only if it was not already (then it holds nothing): a command that only reads the
 * ledger does not load it at start-up for this.
 */
export async function releaseSandboxes(): Promise<void> {
  const { destroyHeldEnvironments } = await import("../adapters/sandbox/managed-environment.js");
  await destroyHeldEnvironments();
}
