import { expect, test } from "bun:test";
import { Metrics } from "../../src/metrics/metrics.ts";

const snapshot = {
  now: new Date("2026-11-22T00:00:10Z"),
  dataBuiltAt: "2026-11-22T00:00:00Z",
  dataVersion: "20261122T000000Z-00000000",
  dataSourceVersions: "a@1",
  dataSources: [{ name: "a", builtAt: "2026-11-21T00:00:00Z" }, { name: "undated", builtAt: "" }],
  version: "0.0.0",
};

test("request counters by route, method and status; cumulative latency buckets per route", () => {
  const metrics = new Metrics(Metrics.table(["/v1/lookup"], 1));
  metrics.observeRequest("/v1/lookup", "POST", 200, 0.0004);
  metrics.observeRequest("/v1/lookup", "POST", 200, 0.003);
  metrics.observeRequest("/v1/lookup", "POST", 401, 0.0001);
  metrics.observeRequest("/v1/lookup", "POST", 200, 30);
  metrics.observeRequest("other", "GET", 404, 0.001);
  const text = metrics.render(snapshot);
  expect(text).toContain('iplookup_http_requests_total{route="/v1/lookup",method="POST",status="200"} 3');
  expect(text).toContain('iplookup_http_requests_total{route="/v1/lookup",method="POST",status="401"} 1');
  expect(text).toContain('iplookup_http_requests_total{route="other",method="GET",status="404"} 1');
  const buckets = [...text.matchAll(/iplookup_http_request_duration_seconds_bucket\{route="\/v1\/lookup",le="([^"]+)"\} (\d+)/g)].map((m) => [m[1], Number(m[2])]);
  expect(buckets).toEqual([
    ["0.0005", 2],
    ["0.001", 2],
    ["0.0025", 2],
    ["0.005", 3],
    ["0.01", 3],
    ["0.025", 3],
    ["0.05", 3],
    ["0.1", 3],
    ["0.25", 3],
    ["0.5", 3],
    ["1", 3],
    ["2.5", 3],
    ["+Inf", 4],
  ]);
  expect(text).toContain('iplookup_http_request_duration_seconds_count{route="/v1/lookup"} 4');
  expect(text).toContain('iplookup_http_request_duration_seconds_bucket{route="other",le="0.001"} 1');
  expect(text).toContain("iplookup_data_age_seconds 10");
  expect(text).toContain('iplookup_data_source_age_seconds{source="a"} 86410');
  expect(text).not.toContain('source="undated"');
  expect(text).toContain('iplookup_build_info{version="0.0.0",data_version="20261122T000000Z-00000000",data_sources="a@1"} 1');
});

test("threads count in regions of one table; every thread's scrape shows the sum, and it never goes down", () => {
  const table = Metrics.table(["/v1/lookup", "/healthz"], 3, Date.parse("2026-11-22T00:00:00Z"));
  const threads = [0, 1, 2].map((thread) => new Metrics(table, thread));
  const total = (text: string) => Number(/iplookup_http_requests_total\{route="\/v1\/lookup",method="POST",status="200"\} (\d+)/.exec(text)?.[1] ?? 0);
  let last = 0;
  for (let round = 1; round <= 5; round++) {
    threads.forEach((metrics, i) => {
      for (let n = 0; n <= i; n++) metrics.observeRequest("/v1/lookup", "POST", 200, 0.001);
      metrics.addLookups(10);
      metrics.addUnits(10);
    });
    const scrapes = threads.map((metrics) => metrics.render(snapshot));
    for (const text of scrapes) {
      expect(total(text)).toBe(6 * round);
      expect(text).toContain(`iplookup_addresses_looked_up_total ${30 * round}`);
      expect(text).toContain(`iplookup_units_consumed_total ${30 * round}`);
      expect(text).toContain(`iplookup_http_request_duration_seconds_count{route="/v1/lookup"} ${6 * round}`);
    }
    expect(total(scrapes[0]!)).toBeGreaterThan(last);
    last = total(scrapes[0]!);
  }
  expect(threads[1]!.render(snapshot)).toContain("iplookup_process_start_time_seconds 1795305600");
  expect(threads[2]!.render(snapshot)).not.toContain('route="/healthz"');
});

test("unknown routes, methods and statuses fold into a bounded set of series", () => {
  const metrics = new Metrics(Metrics.table(["/v1/me"], 1));
  metrics.observeRequest("/nope", "GET", 404, 0.001);
  metrics.observeRequest("/v1/me", "BREW", 405, 0.001);
  metrics.observeRequest("/v1/me", "GET", 999, 0.001);
  const text = metrics.render(snapshot);
  expect(text).toContain('iplookup_http_requests_total{route="other",method="GET",status="404"} 1');
  expect(text).toContain('iplookup_http_requests_total{route="/v1/me",method="OTHER",status="405"} 1');
  expect(text).toContain('iplookup_http_requests_total{route="/v1/me",method="GET",status="599"} 1');
});

test("a SQLite state's checkpoints are written once told, and not at all before (a PostgreSQL state has none)", () => {
  const metrics = new Metrics(Metrics.table([], 2));
  expect(metrics.render(snapshot)).not.toContain("iplookup_state_wal");
  metrics.setWalCheckpoints({ passive: 12, restarts: 3, truncations: 1, busy: 2, longestMs: 7.5 }, 4096);
  // A second thread's region is summed in, and holds nothing of the checkpoints.
  new Metrics(metrics.table, 1).addLookups(5);
  const text = metrics.render(snapshot);
  expect(text).toContain('iplookup_state_wal_checkpoints_total{mode="passive"} 12');
  expect(text).toContain('iplookup_state_wal_checkpoints_total{mode="restart"} 3');
  expect(text).toContain('iplookup_state_wal_checkpoints_total{mode="truncate"} 1');
  expect(text).toContain("iplookup_state_wal_checkpoints_busy_total 2");
  expect(text).toContain("iplookup_state_wal_checkpoint_longest_seconds 0.0075");
  expect(text).toContain("iplookup_state_wal_bytes 4096");
  expect(text).toContain("iplookup_addresses_looked_up_total 5");
});
