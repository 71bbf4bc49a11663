// The console's live events: one watch on the store's change feed, shared by every open event
// stream. Each stream follows the feed from its own position (so `Last-Event-ID` resumes without
// loss), and is told the pending approvals whenever that set changes.
import type { ChangeFeed, FeedFact } from "../index.js";
import type { PendingApproval } from "../library/pending.js";

export interface HubSubscriber {
  fact(f: FeedFact): void;
  pending(list: readonly PendingApproval[]): void;
}

export interface EventHub {
  /** Follows the feed after `position`; the returned function stops. */
  subscribe(position: number, s: HubSubscriber): Promise<() => void>;
  lastPosition(): Promise<number>;
  close(): Promise<void>;
}

const PAGE = 500;

/** Runs `f` one at a time; a call while it runs makes it run once more after. */
function serialised(f: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  let again = false;
  const go = async (): Promise<void> => {
    if (running !== undefined) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        try {
          await f();
        } catch {
          // A failed read (store busy, connection cut) is retried at the next change.
        }
      } while (again);
    })();
    try {
      await running;
    } finally {
      running = undefined;
    }
  };
  return go;
}

export function createEventHub(
  feed: ChangeFeed,
  readPending: () => Promise<readonly PendingApproval[]>,
): EventHub {
  const streams = new Set<{ position: number; s: HubSubscriber; pump: () => Promise<void> }>();
  let pendingText: string | undefined;
  let pendingList: readonly PendingApproval[] = [];
  let stopWatch: (() => Promise<void>) | undefined;
  let watching: Promise<void> | undefined;

  const refreshPending = serialised(async () => {
    const list = await readPending();
    const text = JSON.stringify(list);
    if (text === pendingText) return;
    pendingText = text;
    pendingList = list;
    for (const st of streams) st.s.pending(list);
  });

  const changed = () => {
    for (const st of streams) void st.pump();
    void refreshPending();
  };

  const ensureWatching = () => {
    watching ??= feed.watch(changed).then((stop) => {
      stopWatch = stop;
    });
    return watching;
  };

  return {
    async subscribe(position, s) {
      await ensureWatching();
      const st = {
        position,
        s,
        pump: serialised(async () => {
          for (;;) {
            const page = await feed.factsAfter(st.position, PAGE);
            for (const f of page) {
              if (!streams.has(st)) return;
              st.position = f.position;
              s.fact(f);
            }
            if (page.length < PAGE) return;
          }
        }),
      };
      streams.add(st);
      if (pendingText === undefined) await refreshPending();
      s.pending(pendingList);
      void st.pump();
      return () => {
        streams.delete(st);
      };
    },
    lastPosition: () => feed.lastPosition(),
    async close() {
      streams.clear();
      await watching;
      await stopWatch?.();
    },
  };
}
