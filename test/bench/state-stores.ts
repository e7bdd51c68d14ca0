/**
 * The state store's share of throughput: the same app (state-bench-server.ts) with its
 * keys and units in PostgreSQL (subject) and in a SQLite file (reference), single lookups
 * and batches, paired runs as in http.ts; and how many charges a PostgreSQL group
 * carried, and how many went in one statement (PostgresStore.chargeStats). PostgreSQL is
 * the one on 127.0.0.1:5432 (or IPLOOKUP_BENCH_POSTGRES), in a database made for the run
 * and dropped after it; unreachable, the rows are skipped.
 */
import { SQL } from "bun";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compare, scenarios, type Comparison } from "./http.ts";
import { startProcess, type BenchProcess } from "./processes.ts";
import { pinned } from "./wrk.ts";
import { postgresReachable } from "../support/postgres-reachable.ts";

const ADMIN_URL = process.env.IPLOOKUP_BENCH_POSTGRES || "postgres://postgres@127.0.0.1:5432/test";
const SERVER_CORE = 0;

export interface StateStoreFigures {
  /** PostgreSQL (subject) against the SQLite file (reference). */
  comparisons: Comparison[];
  /**
   * Charges committed on PostgreSQL over the whole run, the groups that carried them, and
   * how many of them the one-statement path granted (PostgresStore.chargeStats).
   */
  commits: { groups: number; items: number; quick: number };
}

/** Null when PostgreSQL cannot be reached. */
export async function measureStateStores(options: { rounds: number; seconds: number; connections: number }): Promise<StateStoreFigures | null> {
  if (!(await postgresReachable(ADMIN_URL))) return null;
  const database = `iplookup_bench_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const admin = new SQL(ADMIN_URL, { max: 1 });
  const work = mkdtempSync(join(tmpdir(), "iplookup-bench-state-"));
  const started: BenchProcess[] = [];
  await admin.unsafe(`CREATE DATABASE ${database}`);
  try {
    const url = new URL(ADMIN_URL);
    url.pathname = `/${database}`;
    const server = async (state: string, stats: string) => {
      const process_ = await startProcess(pinned(SERVER_CORE, [process.execPath, join(import.meta.dir, "state-bench-server.ts"), "0", state, stats]));
      started.push(process_);
      return process_;
    };
    const postgresStats = join(work, "postgres-stats.json");
    const postgres = await server(url.href, postgresStats);
    const sqlite = await server(join(work, "state.db"), join(work, "sqlite-stats.json"));
    const endpoint = (p: BenchProcess) => ({ url: `http://127.0.0.1:${p.info.port}/`, key: String(p.info.key) });
    const comparisons = compare(work, scenarios(), endpoint(postgres), endpoint(sqlite), options);
    await postgres.stop();
    const commits = JSON.parse(readFileSync(postgresStats, "utf8")) as StateStoreFigures["commits"];
    return { comparisons, commits };
  } finally {
    await Promise.all(started.map((p) => p.stop().catch(() => {})));
    await admin.unsafe(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.close();
    rmSync(work, { recursive: true, force: true });
  }
}
