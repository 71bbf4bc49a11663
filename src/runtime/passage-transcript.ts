// The passage transcript (docs/spec/records.md): every model request digest, raw response, parsed turn,
// validation result, tool call and tool result of one passage, and its usage. It is plain JSON,
// stored as a content-addressed record beside the facts.
//
// Entries are canonicalised once, as they are appended (TranscriptLog), and only their canonical
// text is kept: the record's text is those texts joined into the document, and its content ref a
// SHA-256 over that text, so a passage's finish costs a hash, not a second pass over the entries.
// The bytes are written into chunks that a finished log gives back for the next log: a passage
// allocates no buffer once a few have run.

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

/** The entries' canonical texts, comma-separated: on transcripts a log finished. */
const ENTRIES_TEXT: unique symbol = Symbol("transcript entries text");

type WithText = PassageTranscript & { readonly [ENTRIES_TEXT]?: string };

/**
 * Stands for the entries in the body's text: JCS escapes every control character, so a raw NUL
 * appears nowhere else.
 */
const ENTRIES_MARK = "\u0000";

export const CHUNK_BYTES = 32 * 1024;
const COMMA = 0x2c;

/**
 * Chunks that finished logs gave back, taken by the next ones: at most SPARE_CHUNKS (1 MiB) are
 * kept however many passages ran, so a passage's transcript costs no allocation (a new buffer is
 * memory V8 counts outside its heap, and enough of them start a collection).
 */
const spare: Buffer[] = [];
const SPARE_CHUNKS = 32;
const NO_BYTES = Buffer.alloc(0);

/** A chunk of at least `size` bytes: a spare one where it fits in one. */
function takeChunk(size: number): Buffer {
  if (size <= CHUNK_BYTES) return spare.pop() ?? Buffer.allocUnsafe(CHUNK_BYTES);
  return Buffer.allocUnsafe(size);
}

/** The spare chunks now (for tests). */
export function spareChunks(): number {
  return spare.length;
}

/**
 * Fixed-size chunks written in turn: when an entry does not fit in what is left of one, the part
 * of it already written moves to the next (a chunk is never copied to grow), and the chunk keeps
 * the entries before it; each chunk so ends where an entry does, whole UTF-8. `release` gives the
 * chunks back: nothing written before it may be read after it.
 */
class ChunkWriter extends CanonicalWriter {
  readonly full: Uint8Array[] = [];
  /** Every chunk taken, whole. */
  readonly taken: Buffer[] = [];

  constructor() {
    const first = takeChunk(CHUNK_BYTES);
    super(first);
    this.taken.push(first);
  }

  protected override grow(need: number): void {
    const started = this.pos - this.mark;
    const next = takeChunk(Math.max(CHUNK_BYTES, 2 * started + need));
    this.taken.push(next);
    next.set(this.buf.subarray(this.mark, this.pos));
    if (this.mark > 0) this.full.push(this.buf.subarray(0, this.mark));
    this.buf = next;
    this.pos = started;
    this.mark = 0;
  }

  /** What was written, as text (each chunk decoded on its own, then joined). */
  text(): string {
    const last = this.buf.subarray(0, this.pos);
    if (this.full.length === 0) return utf8(last);
    return [...this.full, last].map(utf8).join("");
  }

  /** Gives the chunks back; a later write takes new ones. */
  release(): void {
    for (const c of this.taken)
      if (c.length === CHUNK_BYTES && spare.length < SPARE_CHUNKS) spare.push(c);
    this.taken.length = 0;
    this.full.length = 0;
    this.buf = NO_BYTES;
    this.pos = 0;
    this.mark = 0;
  }
}

function utf8(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
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
  /** The entries' text, once the log is finished. */
  #text: string | undefined;
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
    if (this.#text !== undefined) throw new Error("an entry appended to a finished transcript");
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
   * on the passage's own path reads them); `transcriptRecord` uses the text itself. The log's
   * chunks are given back here: it takes no entry after.
   */
  finish(head: TranscriptHead): PassageTranscript {
    if (this.#text === undefined) {
      this.#text = this.#out.text();
      this.#out.release();
    }
    const text = this.#text;
    let parsed: readonly TranscriptEntry[] | undefined;
    const transcript: PassageTranscript = {
      ...head,
      get entries(): readonly TranscriptEntry[] {
        parsed ??= JSON.parse(`[${text}]`) as TranscriptEntry[];
        return parsed;
      },
    };
    Object.defineProperty(transcript, ENTRIES_TEXT, { value: text, enumerable: false });
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
  const entriesText = (transcript as WithText)[ENTRIES_TEXT];
  const body: Record<string, unknown> = {};
  for (const key of Object.keys(transcript)) {
    // Copied without reading `entries`, which a finished transcript would parse.
    if (key !== "entries") body[key] = transcript[key as keyof TranscriptHead];
  }
  for (const [key, value] of Object.entries(extra)) if (key !== "entries") body[key] = value;
  body["query/id"] = query;
  if (passageRef !== undefined) body["passage/ref"] = passageRef;
  const parts = entriesText === undefined ? undefined : aroundEntries(body);
  let text: string;
  let ref: string;
  if (entriesText === undefined || parts === undefined) {
    body.entries = transcript.entries;
    text = canonicalJson(body);
    ref = `${TRANSCRIPT_REF_PREFIX}:${sha256Text(text)}`;
  } else {
    // Hashed piece by piece, never joined for it; the text is joined once, for the store.
    ref = `${TRANSCRIPT_REF_PREFIX}:${sha256Of([parts.before, entriesText, parts.after])}`;
    text = `${parts.before}${entriesText}${parts.after}`;
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
