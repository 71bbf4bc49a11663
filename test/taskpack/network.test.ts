// A pack's egress allow-list: entries parsed into targets, every malformed shape refused with its
// code and pointer, and the address classes the proxy keeps apart.
import { describe, expect, it } from "vitest";
import { addressClass, canonicalHost, parseNetworkEntry } from "../../src/core/taskpack/network.js";
import { validateTaskPack } from "../../src/core/taskpack/validate-task-pack.js";
import { packDoc } from "./fixtures.js";

function refusal(doc: unknown) {
  const r = validateTaskPack(doc);
  if (r.ok) throw new Error("expected refusal");
  return r.errors.map((e) => [e.code, e.path]);
}

describe("network allow-list entries", () => {
  it("parses names, IPv4 and bracketed IPv6 literals into canonical targets", () => {
    expect(parseNetworkEntry("Registry.NPMjs.org:443")).toEqual({
      ok: true,
      value: { host: "registry.npmjs.org", kind: "name", port: 443 },
    });
    expect(parseNetworkEntry("127.0.0.1:8080")).toEqual({
      ok: true,
      value: { host: "127.0.0.1", kind: "ipv4", port: 8080 },
    });
    expect(parseNetworkEntry("[::1]:80")).toEqual({
      ok: true,
      value: { host: "0:0:0:0:0:0:0:1", kind: "ipv6", port: 80 },
    });
    // An IPv4-mapped IPv6 address is its IPv4 address.
    expect(parseNetworkEntry("[::ffff:10.0.0.1]:5432")).toEqual({
      ok: true,
      value: { host: "10.0.0.1", kind: "ipv4", port: 5432 },
    });
  });

  it.each([
    ["registry.npmjs.org", "taskpack/network-entry"],
    ["registry.npmjs.org:", "taskpack/network-entry"],
    [":443", "taskpack/network-entry"],
    ["::1:80", "taskpack/network-entry"],
    ["host:0", "taskpack/network-port"],
    ["host:65536", "taskpack/network-port"],
    ["host:08", "taskpack/network-port"],
    ["host:http", "taskpack/network-port"],
    ["*.example.com:443", "taskpack/network-host"],
    ["user@host:22", "taskpack/network-host"],
    ["127.1:80", "taskpack/network-host"],
    ["2130706433:80", "taskpack/network-host"],
    ["[not-v6]:80", "taskpack/network-host"],
    ["-bad.example:80", "taskpack/network-host"],
    ["http://example.com:80", "taskpack/network-entry"],
  ])("refuses %s with %s", (entry, code) => {
    const r = parseNetworkEntry(entry);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.errors[0]?.code).toBe(code);
  });

  it("canonicalises hosts as the proxy compares them", () => {
    expect(canonicalHost("[0:0::1]")?.host).toBe("0:0:0:0:0:0:0:1");
    expect(canonicalHost("LOCALHOST.")).toEqual({ host: "localhost", kind: "name" });
    expect(canonicalHost("1.2.3.04")).toBeUndefined();
  });

  it.each([
    ["127.0.0.1", "loopback"],
    ["127.8.9.10", "loopback"],
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["172.32.0.1", "public"],
    ["192.168.1.1", "private"],
    ["169.254.169.254", "link-local"],
    ["100.64.0.1", "cgnat"],
    ["0.0.0.0", "unspecified"],
    ["8.8.8.8", "public"],
    ["::1", "loopback"],
    ["::", "unspecified"],
    ["fd00::1", "unique-local"],
    ["fe80::1", "link-local"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::127.0.0.1", "reserved"],
    ["2606:4700::1111", "public"],
  ])("%s is %s", (address, cls) => {
    expect(addressClass(address)).toBe(cls);
  });
});

describe("a pack's network field", () => {
  it("is absent by default: no network", () => {
    const r = validateTaskPack(packDoc());
    expect(r.ok && r.value.network).toBeUndefined();
  });

  it("maps network.allow to targets", () => {
    const doc = packDoc();
    doc.network = { allow: ["127.0.0.1:8080", "registry.npmjs.org:443"] };
    const r = validateTaskPack(doc);
    expect(r.ok && r.value.network).toEqual({
      allow: [
        { host: "127.0.0.1", kind: "ipv4", port: 8080 },
        { host: "registry.npmjs.org", kind: "name", port: 443 },
      ],
    });
  });

  it("refuses a malformed entry with its code and pointer", () => {
    const doc = packDoc();
    doc.network = { allow: ["127.0.0.1:8080", "example.com", "example.com:99999", "a b:1"] };
    expect(refusal(doc)).toEqual([
      ["taskpack/network-entry", "/network/allow/1"],
      ["taskpack/network-port", "/network/allow/2"],
      ["taskpack/network-host", "/network/allow/3"],
    ]);
  });

  it("refuses the same destination twice, however it is spelled", () => {
    const doc = packDoc();
    doc.network = { allow: ["Example.com:443", "example.com.:443", "[::1]:80", "[0::1]:80"] };
    expect(refusal(doc)).toEqual([
      ["taskpack/network-duplicate", "/network/allow/1"],
      ["taskpack/network-duplicate", "/network/allow/3"],
    ]);
  });

  it("refuses a network field of the wrong shape by the schema", () => {
    const doc = packDoc();
    doc.network = { allow: [] };
    expect(refusal(doc)).toContainEqual(["taskpack/schema", "/network/allow"]);
    doc.network = { allow: ["a:1"], deny: ["b:2"] };
    expect(refusal(doc)).toContainEqual(["taskpack/schema", "/network"]);
    doc.network = { allow: [443] };
    expect(refusal(doc)).toContainEqual(["taskpack/schema", "/network/allow/0"]);
    doc.network = true;
    expect(refusal(doc)).toContainEqual(["taskpack/schema", "/network"]);
  });
});
