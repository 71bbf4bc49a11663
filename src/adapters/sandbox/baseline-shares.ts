// The pinned baselines one sandbox shares out: one pin per folder (and set of dependency folders)
// for as long as a handle or an environment holds it, counted, and removed when the last one lets
// go — or when the process stops, through the set of held removals it is given. The pins (and
// probe folders) of processes that died holding them are swept before the first pin.
import path from "node:path";
import type { Baseline } from "../../core/ports/sandbox.js";
import { WarrantError } from "../../core/result.js";
import {
  BASE_DIR_PREFIX,
  type HashHook,
  type PinnedBaseline,
  pinBaseline,
  type RunAs,
} from "./baseline-pin.js";
import { PROBE_DIR_PREFIX, sweepDeadPins } from "./pin-owner.js";

/** One pinned baseline and how many hold it. */
export interface Share {
  readonly key: string;
  readonly pin: Promise<PinnedBaseline>;
  refs: number;
  /** Removes the pin (once no environment or handle holds it, or the process stops). */
  removeHeld?: () => Promise<void>;
}

export interface BaselineShares {
  /** A handle on the pinned baseline of `dir` (pinned now unless another holds it already). */
  open(dir: string, dependencies?: readonly string[]): Promise<Baseline>;
  /**
   * One more hold on a baseline: the folder `baseline`'s (pinned unless held), or a handle's that
   * `open` gave and that is not released (else `sandbox/baseline-released`).
   */
  hold(baseline: string | Baseline): Share;
  /** Let go of one hold; the pin is removed with the last. */
  release(share: Share): Promise<void>;
}

export function baselineShares(opts: {
  readonly tempRoot: string;
  readonly runAs: RunAs | undefined;
  readonly onHash: HashHook | undefined;
  /** Every pin's removal while it is held, for a process told to stop. */
  readonly heldPins: Set<() => Promise<unknown>>;
}): BaselineShares {
  const { tempRoot, runAs, heldPins } = opts;
  const shares = new Map<string, Share>();
  // Before this sandbox's first pin: the pins (and probe folders) of processes that died holding
  // them go.
  let swept: Promise<unknown> | undefined;
  const sweepOnce = () => {
    swept ??= Promise.all([
      sweepDeadPins(tempRoot, BASE_DIR_PREFIX).catch(() => 0),
      sweepDeadPins(tempRoot, PROBE_DIR_PREFIX).catch(() => 0),
    ]);
    return swept;
  };
  const handles = new WeakMap<Baseline, Share>();
  const acquire = (dir: string, dependencies: readonly string[] = []): Share => {
    const source = path.resolve(dir);
    const key = [source, ...dependencies].join("\0");
    let share = shares.get(key);
    if (share === undefined) {
      share = {
        key,
        pin: sweepOnce().then(() =>
          pinBaseline(source, { tempRoot, runAs, onHash: opts.onHash, dependencies }),
        ),
        refs: 0,
      };
      shares.set(key, share);
      const made = share;
      const remove = async () => {
        heldPins.delete(remove);
        if (shares.get(made.key) === made) shares.delete(made.key);
        const pin = await made.pin.catch(() => undefined);
        await pin?.remove();
      };
      heldPins.add(remove);
      made.removeHeld = remove;
      // A pin that fails is not kept for the next caller.
      share.pin.catch(() => {
        if (shares.get(key) === share) shares.delete(key);
      });
    }
    share.refs += 1;
    return share;
  };
  const release = async (share: Share) => {
    share.refs -= 1;
    if (share.refs > 0) return;
    await share.removeHeld?.();
  };

  return {
    async open(dir, dependencies) {
      const share = acquire(dir, dependencies);
      let pin: PinnedBaseline;
      try {
        pin = await share.pin;
      } catch (e) {
        await release(share);
        throw e;
      }
      let released = false;
      const handle: Baseline = {
        source: pin.source,
        dependencies: pin.dependencies.map((d) => d.rel),
        files: pin.files,
        bytes: pin.bytes,
        digests: () => pin.digests(),
        async release() {
          if (released) return;
          released = true;
          handles.delete(handle);
          await release(share);
        },
      };
      handles.set(handle, share);
      return handle;
    },
    hold(baseline) {
      if (typeof baseline === "string") return acquire(baseline);
      const held = handles.get(baseline);
      if (held === undefined || shares.get(held.key) !== held) {
        throw new WarrantError("sandbox/baseline-released", "that baseline is not held here");
      }
      held.refs += 1;
      return held;
    },
    release,
  };
}
