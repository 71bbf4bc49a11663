// A traced command at the terminal: SIGINT or SIGTERM ends the drive's open spans as interrupted
// and sends them before the process exits as the signal would have had it (130, 143); and once the
// command is done, an export still retrying a collector that does not answer does not keep the
// process alive. Without tracing nothing is installed: the process behaves as it always did.
import type { Warrant } from "../library/create-warrant.js";

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
  if (!warrant.telemetry.enabled) return drive();
  const handlers = (Object.keys(EXIT_ON) as (keyof typeof EXIT_ON)[]).map((signal) => {
    // Once: a second signal while the spans are sent ends the process at once.
    const handler = () => {
      void warrant.telemetry.interrupted().finally(() => process.exit(EXIT_ON[signal]));
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
