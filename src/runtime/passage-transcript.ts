// The passage transcript (docs/spec/records.md): every model request digest, raw response, parsed turn,
// validation result, tool call and tool result of one passage, and its usage. It is plain JSON,
// stored as a content-addressed record beside the facts.
//
// Entries are canonicalised once, as they are appended (TranscriptLog), and only their canonical
// text is kept: the record's text is those texts joined into the document, and its content ref a
// SHA-256 over that text, so a passage's finish costs a hash, not a second pass over the entries.

import type { Role } from "../core/loop/types.js";
import type { LedgerRecord } from "../core/ports/ledger-store.js";
import type { Usage } from "../core/ports/model-provider.js";
import { canonicalJson } from "../core/records/canonical.js";
import {
  CanonicalWriter,
  type KnownBytes,
  NeedsReference,
} from "../core/records/canonical-bytes.js";
import { sha256Of, sha256Text } from "./passage-digest.js";
import { projection, type TranscriptEntry, writeEntry } from "./transcript-entries.js";

export const TRANSCRIPT_REF_PREFIX = "passage-transcript";

const encoder = new TextEncoder();

export type { TranscriptEntry };

/** The passage's totals: the providers' token counts summed over its model calls. */
export interface TranscriptUsage extends Usage {
  readonly latencyMs: number;
  readonly modelCalls: number;
  readonly toolCalls: number;
  readonly repairs: number;
}

export interface PassageTranscript {
  readonly schema: "warrant.passage-transcript.v1";
  readonly role: Role;
  readonly "agent/id": string;
  readonly provider: string;
  /** `digestOf` (JCS + SHA-256) of the system prompt and of the evidence as the model read it. */
  readonly systemDigest: string;
  readonly evidenceDigest: string;
  /** The refs of the evidence items, when the evidence was given as items. */
  readonly evidenceRefs?: readonly string[];
  readonly entries: readonly TranscriptEntry[];
  readonly usage: TranscriptUsage;
  readonly outcome:
    | { readonly ok: true; readonly type: string }
    | { readonly ok: false; readonly code: string; readonly message: string };
}

/** Everything of a transcript but its entries. */
export type TranscriptHead = Omit<PassageTranscript, "entries">;

/** The entries' canonical texts, comma-separated, in UTF-8 chunks: on transcripts a log finished. */
const ENTRY_CHUNKS: unique symbol = Symbol("transcript entry chunks");

type WithChunks = PassageTranscript & { readonly [ENTRY_CHUNKS]?: readonly Uint8Array[] };

/**
 * Stands for the entries in the body's text: JCS escapes every control character, so a raw NUL
 * appears nowhere else.
 */
const ENTRIES_MARK = "\u0000";

const CHUNK_BYTES = 32 * 1024;
/** The first chunk: a short passage's whole transcript, without a full chunk's allocation. */
const FIRST_CHUNK_BYTES = 4 * 1024;
const COMMA = 0x2c;

function textOf(chunks: readonly Uint8Array[]): string {
  let length = 0;
  for (const c of chunks) length += c.length;
  const all = Buffer.allocUnsafe(length);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.length;
  }
  return all.toString("utf8");
}

/**
 * Fixed-size chunks written in turn: when an entry does not fit in what is left of one, the part
 * of it already written moves to the next (a chunk is never copied to grow), and the chunk keeps
 * the entries before it.
 */
class ChunkWriter extends CanonicalWriter {
  readonly full: Uint8Array[] = [];

  constructor() {
    super(Buffer.allocUnsafe(FIRST_CHUNK_BYTES));
  }

  protected override grow(need: number): void {
    const started = this.pos - this.mark;
    const next = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, 2 * started + need));
    next.set(this.buf.subarray(this.mark, this.pos));
    if (this.mark > 0) this.full.push(this.buf.subarray(0, this.mark));
    this.buf = next;
    this.pos = started;
    this.mark = 0;
  }

  /** The chunks written so far, the last one's written part included. */
  chunks(): Uint8Array[] {
    return [...this.full, this.buf.subarray(0, this.pos)];
  }
}

/**
 * The entries of one passage, each kept only as its canonical (JCS) text, written as UTF-8 when it
 * is appended, outside the JavaScript heap: a long passage fills fixed-size chunks, not thousands
 * of strings for the garbage collector to copy. A model's raw output is canonicalised once, for
 * its entry and for the next request digest that replays it (`known`).
 */
export class TranscriptLog {
  readonly #out = new ChunkWriter();
  #count = 0;
  #raw: object | undefined;
  readonly #rawBytes = new CanonicalWriter(new Uint8Array(512));
  readonly #known: KnownBytes = {
    get: (o: object) => (o === this.#raw ? this.#rawBytes : undefined),
  };

  /** The bytes already made for the last model output appended (read by request digests). */
  get known(): KnownBytes {
    return this.#known;
  }

  get length(): number {
    return this.#count;
  }

  append(entry: TranscriptEntry): void {
    if (entry.kind === "model-call" && typeof entry.raw === "object" && entry.raw !== null) {
      this.#raw = undefined;
      this.#rawBytes.reset();
      this.#rawBytes.canonical(entry.raw);
      this.#raw = entry.raw;
    }
    const out = this.#out;
    out.mark = out.pos;
    try {
      if (this.#count > 0) out.byte(COMMA);
      const at = out.pos - out.mark;
      try {
        writeEntry(out, entry, this.#known);
      } catch (e) {
        if (!(e instanceof NeedsReference)) throw e;
        // Written again from the entry's start, as a value, by the general writer.
        out.pos = out.mark + at;
        out.canonical(projection(entry), this.#known);
      }
    } catch (e) {
      // Nothing of a refused entry stays.
      out.pos = out.mark;
      throw e;
    }
    this.#count++;
  }

  /**
   * The finished transcript. Its `entries` are parsed back from their text on first read (nothing
   * on the passage's own path reads them); `transcriptRecord` uses the bytes themselves.
   */
  finish(head: TranscriptHead): PassageTranscript {
    const chunks = this.#out.chunks();
    let parsed: readonly TranscriptEntry[] | undefined;
    const transcript: PassageTranscript = {
      ...head,
      get entries(): readonly TranscriptEntry[] {
        parsed ??= JSON.parse(`[${textOf(chunks)}]`) as TranscriptEntry[];
        return parsed;
      },
    };
    Object.defineProperty(transcript, ENTRY_CHUNKS, { value: chunks, enumerable: false });
    return transcript;
  }
}

/**
 * The body's canonical text on either side of its entries, whose text is already made; undefined
 * only if the head needed the reference implementation, which knows no placeholders.
 */
function aroundEntries(
  body: Readonly<Record<string, unknown>>,
): { readonly before: string; readonly after: string } | undefined {
  const placeholder: readonly unknown[] = [];
  const text = canonicalJson(
    { ...body, entries: placeholder },
    { get: (o) => (o === placeholder ? ENTRIES_MARK : undefined) },
  );
  const at = text.indexOf(ENTRIES_MARK);
  if (at < 0) return undefined;
  return { before: `${text.slice(0, at)}[`, after: `]${text.slice(at + 1)}` };
}

/**
 * The transcript as a ledger record (`passage-transcript:sha256:…`) of a query. The body names its
 * query (and passage, when given), so identical passages of two loops are two records. The record
 * carries the body's canonical text, from which the ref is computed and which the store keeps.
 */
export function transcriptRecord(
  query: string,
  transcript: PassageTranscript,
  passageRef?: string,
  /** More head fields: what shaped the passage beyond its agent's ID (skills, memory, middleware). */
  extra: Readonly<Record<string, unknown>> = {},
): LedgerRecord {
  const chunks = (transcript as WithChunks)[ENTRY_CHUNKS];
  const body: Record<string, unknown> = {};
  for (const key of Object.keys(transcript)) {
    // Copied without reading `entries`, which a finished transcript would parse.
    if (key !== "entries") body[key] = transcript[key as keyof TranscriptHead];
  }
  for (const [key, value] of Object.entries(extra)) if (key !== "entries") body[key] = value;
  body["query/id"] = query;
  if (passageRef !== undefined) body["passage/ref"] = passageRef;
  const parts = chunks === undefined ? undefined : aroundEntries(body);
  let text: string;
  let ref: string;
  if (chunks === undefined || parts === undefined) {
    body.entries = transcript.entries;
    text = canonicalJson(body);
    ref = `${TRANSCRIPT_REF_PREFIX}:${sha256Text(text)}`;
  } else {
    // Hashed piece by piece: the bytes are never joined; the text is made once, for the store.
    ref = `${TRANSCRIPT_REF_PREFIX}:${sha256Of([parts.before, ...chunks, parts.after])}`;
    text = textOf([encoder.encode(parts.before), ...chunks, encoder.encode(parts.after)]);
  }
  let parsedBody: unknown;
  return {
    ref,
    kind: "transcript",
    query,
    text,
    get body(): unknown {
      parsedBody ??= parts === undefined ? body : JSON.parse(text);
      return parsedBody;
    },
  };
}
