// A traced drive at the terminal: SIGINT or SIGTERM ends its open spans as interrupted and sends
// them before the process exits as the signal would have had it (130, 143). Without tracing no
// handler is installed, so the signals keep their default.
import type { Warrant } from "../library/create-warrant.js";

const EXIT_ON: Readonly<Record<"SIGINT" | "SIGTERM", number>> = { SIGINT: 130, SIGTERM: 143 };

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
