import { describe, expect, test } from "bun:test";
import { StoreError } from "../../src/store/store.ts";
import type { StoreKind } from "./store-suite.ts";

/**
 * Local corrections (CONTRACT §15) on every Store, run once a store kind
 * (corrections-store-sqlite.test.ts, corrections-store-postgres.test.ts).
 */
export function correctionsStoreSuite(kind: StoreKind): void {
  const clock = () => {
    let tick = 0;
    return () => new Date(Date.UTC(2026, 10, 5, 10) + 1000 * tick++);
  };

  describe("corrections", () => {
    test("put, list in address order, replace (created_at kept), remove", async () => {
      const store = await kind.open(await kind.fresh(), { clock: clock() });
      expect(await store.listCorrections()).toEqual([]);
      const inner = await store.putCorrection("198.51.100.128/25", { asn: 64500, privacy: { hosting: true, service: "Example Cloud" } }, null);
      expect(inner).toEqual({
        cidr: "198.51.100.128/25",
        fields: { asn: 64500, privacy: { hosting: true, service: "Example Cloud" } },
        note: null,
        createdAt: "2026-11-05T10:00:00.000Z",
        updatedAt: "2026-11-05T10:00:00.000Z",
      });
      await store.putCorrection("2001:db8::/32", { country_code: "DE", city: null }, "moved to Berlin");
      await store.putCorrection("198.51.100.0/24", { country_code: "FR" }, "ticket 12");
      await store.putCorrection("192.0.2.0/24", { as_name: "Ünïcode Net" }, null);
      expect((await store.listCorrections()).map((c) => c.cidr)).toEqual(["192.0.2.0/24", "198.51.100.0/24", "198.51.100.128/25", "2001:db8::/32"]);
      const listed = await store.listCorrections();
      expect(listed[3]).toMatchObject({ fields: { country_code: "DE", city: null }, note: "moved to Berlin" });
      expect(listed[0]?.fields).toEqual({ as_name: "Ünïcode Net" });

      const replaced = await store.putCorrection("198.51.100.128/25", { asn: null }, "no AS");
      expect(replaced).toEqual({ cidr: "198.51.100.128/25", fields: { asn: null }, note: "no AS", createdAt: "2026-11-05T10:00:00.000Z", updatedAt: "2026-11-05T10:00:04.000Z" });

      expect(await store.removeCorrection("198.51.100.128/25")).toEqual(replaced);
      expect(await store.removeCorrection("198.51.100.128/25")).toBeNull();
      expect((await store.listCorrections()).map((c) => c.cidr)).toEqual(["192.0.2.0/24", "198.51.100.0/24", "2001:db8::/32"]);
      await store.close();
    });

    test("what is not sound is refused with StoreError and writes nothing", async () => {
      const store = await kind.open(await kind.fresh());
      await store.putCorrection("192.0.2.0/24", { asn: 1 }, null);
      const generation = (await store.generation()).count;
      const refused: [string, unknown, string | null][] = [
        ["192.0.2.1/24", { asn: 1 }, null], // host bits
        ["192.0.2.0/33", { asn: 1 }, null],
        ["2001:DB8::/32", { asn: 1 }, null], // not canonical
        ["192.0.2.0/24", {}, null],
        ["192.0.2.0/24", { country_code: "XX" }, null],
        ["192.0.2.0/24", { asn: 4_294_967_296 }, null],
        ["192.0.2.0/24", { as_name: "bad\u0000name" }, null],
        ["192.0.2.0/24", { city: "x" }, "a\nnote"],
        ["192.0.2.0/24", { privacy: { tor: "yes" } }, null],
        ["192.0.2.0/24", { colour: "red" }, null],
      ];
      for (const [cidr, fields, note] of refused) {
        await expect(store.putCorrection(cidr, fields as never, note)).rejects.toBeInstanceOf(StoreError);
      }
      expect(await store.listCorrections()).toEqual([expect.objectContaining({ cidr: "192.0.2.0/24", fields: { asn: 1 } })]);
      expect((await store.generation()).count).toBe(generation);
      await store.close();
    });

    test("every change moves the change counter, seen by another store on the same state, with the corrections of that moment", async () => {
      const location = await kind.fresh();
      const writer = await kind.open(location);
      const reader = await kind.open(location);
      let seen = (await reader.correctionSnapshot()).generation.count;
      const moved = async () => {
        const snapshot = await reader.correctionSnapshot();
        expect(snapshot.generation.count).toBeGreaterThan(seen);
        expect((await reader.generation()).count).toBe(snapshot.generation.count);
        seen = snapshot.generation.count;
        return snapshot.corrections.map((c) => [c.cidr, c.fields]);
      };
      await writer.putCorrection("192.0.2.0/24", { country_code: "DE" }, null);
      expect(await moved()).toEqual([["192.0.2.0/24", { country_code: "DE" }]]);
      await writer.putCorrection("192.0.2.0/24", { country_code: "AT" }, null);
      expect(await moved()).toEqual([["192.0.2.0/24", { country_code: "AT" }]]);
      await writer.removeCorrection("192.0.2.0/24");
      expect(await moved()).toEqual([]);
      // Removing what is not there changes nothing.
      await writer.removeCorrection("192.0.2.0/24");
      expect((await reader.generation()).count).toBe(seen);
      await writer.close();
      await reader.close();
    });

    test("copied by exportState and importState; a store holding corrections is refused unless replaced", async () => {
      const source = await kind.open(await kind.fresh(), { clock: clock() });
      await source.putCorrection("2001:db8:1::/48", { privacy: { vpn: true } }, "vpn exit");
      await source.putCorrection("203.0.113.0/24", { country_code: "NL", asn: 64501 }, null);
      const snapshot = await source.exportState();
      expect(snapshot.corrections?.map((c) => c.cidr)).toEqual(["203.0.113.0/24", "2001:db8:1::/48"]);

      const target = await kind.open(await kind.fresh());
      await target.importState(snapshot);
      expect(await target.listCorrections()).toEqual(await source.listCorrections());

      const other = await kind.open(await kind.fresh());
      await other.putCorrection("192.0.2.0/24", { asn: 7 }, null);
      await expect(other.importState(snapshot)).rejects.toThrow(/1 correction already/);
      expect((await other.listCorrections()).map((c) => c.cidr)).toEqual(["192.0.2.0/24"]);
      await other.importState(snapshot, { replace: true });
      expect(await other.listCorrections()).toEqual(await source.listCorrections());

      const unsound = { ...snapshot, corrections: [...(snapshot.corrections ?? []), { ...snapshot.corrections![0]!, fields: { country_code: "ZZ" } }] };
      const empty = await kind.open(await kind.fresh());
      await expect(empty.importState(unsound)).rejects.toThrow(/country_code/);
      const twice = { ...snapshot, corrections: [snapshot.corrections![0]!, snapshot.corrections![0]!] };
      await expect(empty.importState(twice)).rejects.toThrow(/appears twice/);
      expect(await empty.listCorrections()).toEqual([]);
      for (const store of [source, target, other, empty]) await store.close();
    });
  });
}
