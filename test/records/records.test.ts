// Content refs (the vectors of docs/spec/contracts.md), record builders, passage refs and host signatures.
import { readFileSync } from "node:fs";
import path from "node:path";
import * as ed from "@noble/ed25519";
import { describe, expect, it } from "vitest";
import { base64url, canonicalJson, digestOf } from "../../src/core/records/canonical.js";
import { hasValidContentRef } from "../../src/core/records/content-ref.js";
import { buildExecution, EXECUTION_PREFIX } from "../../src/core/records/execution.js";
import { toLedgerRecord } from "../../src/core/records/ledger-record.js";
import { passageRef } from "../../src/core/records/passage-ref.js";
import { buildProposal, PROPOSAL_PREFIX } from "../../src/core/records/proposal.js";
import { buildReview, REVIEW_PREFIX } from "../../src/core/records/review.js";
import {
  publicKeyOf,
  signedBytes,
  signRecord,
  verifyRecordSignature,
} from "../../src/core/records/signature.js";
import { seedExamplesDir } from "../helpers/cli.js";

const published = JSON.parse(
  readFileSync(
    path.join(seedExamplesDir, "verified.corpus-experiment-task-pack-execution.json"),
    "utf8",
  ),
) as Record<string, unknown>;

const key = (n: number) => new Uint8Array(32).fill(n);
const DIGEST = digestOf("x");

const proposalInput = {
  query: "query:demo-1",
  agentId: "agent:baga6yaq6example",
  passageRef: "passage:sha256:AAAA",
  candidate: { hypothesis: "h", steps: [{ id: "s1", action: "observe" }] },
  evidence: ["task:statement"],
  createdAt: "2026-12-01T10:00:00Z",
};

describe("content refs", () => {
  it("the JCS vector of docs/spec/contracts.md: text and digest", () => {
    const v = { z: [3, 2, 1], a: { b: true, a: "ą" }, n: 1 };
    expect(canonicalJson(v)).toBe('{"a":{"a":"ą","b":true},"n":1,"z":[3,2,1]}');
    expect(digestOf(v)).toBe("sha256:r2bAYdhk5FfM2FDmWq2HlGY4jDKM2Dcg6SG84tw7g7o");
  });
  it("the published execution record reproduces its own execution/ref", () => {
    expect(hasValidContentRef(EXECUTION_PREFIX, "execution/ref", published)).toBe(true);
  });
  it("a changed field of the published record no longer matches its ref", () => {
    expect(
      hasValidContentRef(EXECUTION_PREFIX, "execution/ref", { ...published, outcome: "unknown" }),
    ).toBe(false);
  });
  it("the signature is not part of the content", () => {
    expect(
      hasValidContentRef(EXECUTION_PREFIX, "execution/ref", { ...published, signature: "x" }),
    ).toBe(true);
  });
});

describe("record builders", () => {
  it("a proposal's ref is its content ref, deterministic, and changes with any field", () => {
    const p = buildProposal(proposalInput);
    expect(p["proposal/ref"]).toMatch(/^corpus-experiment:sha256:[A-Za-z0-9_-]{43}$/);
    expect(hasValidContentRef(PROPOSAL_PREFIX, "proposal/ref", p)).toBe(true);
    expect(buildProposal(proposalInput)).toEqual(p);
    expect(buildProposal({ ...proposalInput, evidence: [] })["proposal/ref"]).not.toBe(
      p["proposal/ref"],
    );
  });
  it("a review names the exact proposal", () => {
    const p = buildProposal(proposalInput);
    const r = buildReview({
      query: "query:demo-1",
      proposalRef: p["proposal/ref"],
      agentId: "agent:r",
      passageRef: "passage:sha256:BBBB",
      verdict: { decision: "accept", findings: [] },
      createdAt: "2026-12-01T10:01:00Z",
    });
    expect(r["review/ref"]).toMatch(/^corpus-experiment-review:sha256:[A-Za-z0-9_-]{43}$/);
    expect(r["proposal/ref"]).toBe(p["proposal/ref"]);
    expect(hasValidContentRef(REVIEW_PREFIX, "review/ref", r)).toBe(true);
  });
  it("an execution carries steps, checks, outcome, refusal, result digest, start and end", () => {
    const e = buildExecution({
      query: "query:demo-1",
      proposalRef: buildProposal(proposalInput)["proposal/ref"],
      environmentRef: "environment:e1",
      steps: [
        {
          id: "s1",
          effectClass: "observation",
          exitStatus: 0,
          stdoutDigest: DIGEST,
          stderrDigest: DIGEST,
          truncated: false,
        },
        {
          id: "s2",
          effectClass: "mutation",
          exitStatus: null,
          stdoutDigest: DIGEST,
          stderrDigest: DIGEST,
          truncated: false,
          refusalCode: "hil/denied",
        },
      ],
      checks: [],
      outcome: "refused",
      refusalCode: "hil/denied",
      startedAt: "2026-12-01T10:02:00Z",
      endedAt: "2026-12-01T10:03:00Z",
    });
    expect(e["execution/ref"]).toMatch(/^corpus-task-pack-execution:sha256:[A-Za-z0-9_-]{43}$/);
    expect(hasValidContentRef(EXECUTION_PREFIX, "execution/ref", e)).toBe(true);
    expect(e["refusal/code"]).toBe("hil/denied");
    expect(e.steps[1]).toMatchObject({ class: "mutation", "exit-status": null });
    expect(e["result/digest"]).toBe(
      digestOf({ outcome: "refused", "refusal/code": "hil/denied", steps: e.steps, checks: [] }),
    );
  });
  it("toLedgerRecord refuses a record without its ref", () => {
    expect(() => toLedgerRecord("proposal", { "query/id": "query:x" })).toThrow(/without its ref/);
  });
});

describe("passage refs", () => {
  it("are deterministic in (query, role, agent, ordinal) and differ in each", () => {
    const base = passageRef("query:q", "implementer", "agent:a", 1);
    expect(base).toMatch(/^passage:sha256:[A-Za-z0-9_-]{43}$/);
    expect(passageRef("query:q", "implementer", "agent:a", 1)).toBe(base);
    const others = [
      passageRef("query:r", "implementer", "agent:a", 1),
      passageRef("query:q", "reviewer", "agent:a", 1),
      passageRef("query:q", "implementer", "agent:b", 1),
      passageRef("query:q", "implementer", "agent:a", 2),
    ];
    expect(new Set([base, ...others]).size).toBe(5);
  });
});

describe("host signatures", () => {
  it("sign and verify over the canonical bytes; the ref is unchanged by signing", async () => {
    const p = buildProposal(proposalInput);
    const signed = await signRecord(p, key(7));
    expect(signed["proposal/ref"]).toBe(p["proposal/ref"]);
    expect(hasValidContentRef(PROPOSAL_PREFIX, "proposal/ref", signed)).toBe(true);
    expect(await verifyRecordSignature(signed)).toBe(true);
    expect(await verifyRecordSignature(signed, await publicKeyOf(key(7)))).toBe(true);
  });
  it("refuse a tampered record, another key, a missing or malformed signature", async () => {
    const signed = await signRecord(buildProposal(proposalInput), key(7));
    expect(await verifyRecordSignature({ ...signed, "created-at": "2027-01-01T00:00:00Z" })).toBe(
      false,
    );
    expect(await verifyRecordSignature(signed, await publicKeyOf(key(8)))).toBe(false);
    expect(await verifyRecordSignature(buildProposal(proposalInput))).toBe(false);
    expect(
      await verifyRecordSignature({ ...signed, signature: { ...signed.signature, value: "!!" } }),
    ).toBe(false);
    const other = await signRecord(buildProposal(proposalInput), key(8));
    expect(
      await verifyRecordSignature({
        ...signed,
        signature: { ...signed.signature, value: other.signature.value },
      }),
    ).toBe(false);
  });
  it("signs the same bytes as the reference Ed25519 (RFC 8032 test 1, @noble/ed25519)", async () => {
    // RFC 8032 §7.1 TEST 1: the empty message's signature by this secret key.
    const secret = Uint8Array.from(
      Buffer.from("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60", "hex"),
    );
    expect(Buffer.from(await publicKeyOf(secret)).toString("hex")).toBe(
      "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
    );
    const p = buildProposal(proposalInput);
    for (const k of [secret, key(7), key(200)]) {
      const signed = await signRecord(p, k);
      const expected = await ed.signAsync(signedBytes(p), k);
      expect(signed.signature.value).toBe(base64url(expected));
      expect(signed.signature["key/public"]).toBe(base64url(await ed.getPublicKeyAsync(k)));
    }
  });
  it("signs with the key's bytes as they are now, even in an array it signed with before", async () => {
    const p = buildProposal(proposalInput);
    const k = key(3);
    const before = await signRecord(p, k);
    k.fill(4);
    const after = await signRecord(p, k);
    expect(after.signature).toEqual((await signRecord(p, key(4))).signature);
    expect(after.signature.value).not.toBe(before.signature.value);
    expect(await publicKeyOf(k)).toEqual(await publicKeyOf(key(4)));
    await expect(signRecord(p, new Uint8Array(31))).rejects.toThrow();
  });
  it("is deterministic (Ed25519) for the same key and record", async () => {
    const p = buildProposal(proposalInput);
    expect((await signRecord(p, key(1))).signature).toEqual(
      (await signRecord(p, key(1))).signature,
    );
  });
});
