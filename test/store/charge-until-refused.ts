/**
 * Run by sqlite-faults.test.ts under `ulimit -f`: charges a key of the state file at
 * argv[2] until a charge is refused, and prints the refusal's message.
 */
import { SqliteStore } from "../../src/store/sqlite-store.ts";

const store = SqliteStore.open(process.argv[2]!);
const keyId = (await store.createKey("k", "unlimited")).key.id;
for (let n = 0; n < 100_000; n++) {
  try {
    await store.charge({ keyId, period: "2026-11", units: 1, limit: null });
  } catch (error) {
    console.log((error as Error).message);
    break;
  }
}
await store.close();
