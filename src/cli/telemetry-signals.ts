// A drive at the terminal: SIGINT or SIGTERM destroys the environments the process holds open and
// removes its pinned baselines, ends the drive's open spans as interrupted and sends them (when
// traced), then exits as the signal would have had it (130, 143); a second signal exits at once.
// Once the command is done, an export still retrying a collector that does not answer does not keep
// the process alive.
import type { Warrant } from "../library/create-warrant.js";
import { releaseSandboxes } from "../library/shutdown.js";

const EXIT_ON: Readonly<Record<"SIGINT" | "SIGTERM", number>> = { SIGINT: 130, SIGTERM: 143 };

/**
 * Ends the process once only telemetry's retries would keep it alive and all it wrote is out. The
 * check runs on an unref'd timer: a process with nothing else to do exits on its own, as before.
 */
export function exitWhenOnlyTelemetryRemains(warrant: Warrant): void {
  if (!warrant.telemetry.enabled) return;
  const timer = setInterval(() => {
    if (process.stdout.writableLength === 0 && process.stderr.writableLength === 0) process.exit();
  }, 50);
  timer.unref();
}

export async function flushingOnSignals<T>(warrant: Warrant, drive: () => Promise<T>): Promise<T> {
  const handlers = (Object.keys(EXIT_ON) as (keyof typeof EXIT_ON)[]).map((signal) => {
    // Once: a second signal while environments are removed or spans sent ends the process at once.
    const handler = () => {
      void (async () => {
        await releaseSandboxes().catch(() => undefined);
        if (warrant.telemetry.enabled) await warrant.telemetry.interrupted().catch(() => undefined);
      })().finally(() => process.exit(EXIT_ON[signal]));
    };
    process.once(signal, handler);
    return () => process.removeListener(signal, handler);
  });
  try {
    return await drive();
  } finally {
    for (const remove of handlers) remove();
  }
}
