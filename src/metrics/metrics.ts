/**
 * The service's metrics, kept in memory and written in the Prometheus text format
 * (version 0.0.4). What each one means is in the README.
 */

/** Upper bounds of the latency histogram's buckets, in seconds. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

interface Histogram {
  /** Observations per bucket, each counted once, in the first bucket it fits (cumulated when written). */
  counts: number[];
  sum: number;
  count: number;
}

/** A request counter and the histogram of its route, found by route, method and status. */
interface Series {
  readonly labels: string;
  value: number;
  readonly histogram: Histogram;
}

export interface MetricsSnapshotInput {
  readonly now: Date;
  readonly dataBuiltAt: string;
  readonly dataVersion: string;
  /** The sources' names and versions, joined. */
  readonly dataSourceVersions: string;
  /** Each source's name and build time ("" when the source does not say). */
  readonly dataSources: ReadonlyArray<{ readonly name: string; readonly builtAt: string }>;
  readonly version: string;
}

export class Metrics {
  /** route → method → status → its counter: looked up without building a string per request. */
  private readonly series = new Map<string, Map<string, Map<number, Series>>>();
  private readonly latency = new Map<string, Histogram>();
  private addresses = 0;
  private units = 0;
  private readonly started = Date.now();

  /** Counts one answered request; `route` is a known route pattern or "other". */
  observeRequest(route: string, method: string, status: number, seconds: number): void {
    const series = this.seriesOf(route, method, status);
    series.value++;
    const histogram = series.histogram;
    let bucket = 0;
    while (bucket < LATENCY_BUCKETS.length && seconds > (LATENCY_BUCKETS[bucket] as number)) bucket++;
    if (bucket < LATENCY_BUCKETS.length) histogram.counts[bucket]!++;
    histogram.sum += seconds;
    histogram.count++;
  }

  private seriesOf(route: string, method: string, status: number): Series {
    let byMethod = this.series.get(route);
    if (!byMethod) this.series.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = new Map()));
    let series = byStatus.get(status);
    if (!series) {
      let histogram = this.latency.get(route);
      if (!histogram) this.latency.set(route, (histogram = { counts: LATENCY_BUCKETS.map(() => 0), sum: 0, count: 0 }));
      byStatus.set(status, (series = { labels: `route="${route}",method="${method}",status="${status}"`, value: 0, histogram }));
    }
    return series;
  }

  /** Addresses answered by lookups (a batch of N counts N). */
  addLookups(count: number): void {
    this.addresses += count;
  }

  addUnits(count: number): void {
    this.units += count;
  }

  render(input: MetricsSnapshotInput): string {
    const lines: string[] = [];
    const metric = (name: string, type: string, help: string, samples: string[]) => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, ...samples);
    };
    const counters: string[] = [];
    for (const byMethod of this.series.values()) {
      for (const byStatus of byMethod.values()) for (const series of byStatus.values()) counters.push(`iplookup_http_requests_total{${series.labels}} ${series.value}`);
    }
    metric("iplookup_http_requests_total", "counter", "HTTP requests answered, by route, method and status.", counters);
    const histogramLines: string[] = [];
    for (const [route, histogram] of this.latency) {
      let cumulative = 0;
      LATENCY_BUCKETS.forEach((bound, i) => {
        cumulative += histogram.counts[i] as number;
        histogramLines.push(`iplookup_http_request_duration_seconds_bucket{route="${route}",le="${bound}"} ${cumulative}`);
      });
      histogramLines.push(
        `iplookup_http_request_duration_seconds_bucket{route="${route}",le="+Inf"} ${histogram.count}`,
        `iplookup_http_request_duration_seconds_sum{route="${route}"} ${histogram.sum}`,
        `iplookup_http_request_duration_seconds_count{route="${route}"} ${histogram.count}`,
      );
    }
    metric("iplookup_http_request_duration_seconds", "histogram", "Time from receiving a request to its response, by route.", histogramLines);
    metric("iplookup_addresses_looked_up_total", "counter", "Addresses answered by /v1/lookup and /v1/lookup/batch.", [`iplookup_addresses_looked_up_total ${this.addresses}`]);
    metric("iplookup_units_consumed_total", "counter", "Units charged to keys by this process.", [`iplookup_units_consumed_total ${this.units}`]);
    const built = Date.parse(input.dataBuiltAt);
    metric("iplookup_data_built_timestamp_seconds", "gauge", "When the loaded data set was built (Unix time).", [`iplookup_data_built_timestamp_seconds ${Math.floor(built / 1000)}`]);
    metric("iplookup_data_age_seconds", "gauge", "Age of the loaded data set.", [`iplookup_data_age_seconds ${Math.max(0, Math.floor((input.now.getTime() - built) / 1000))}`]);
    const sourceAges = input.dataSources
      .filter((source) => !Number.isNaN(Date.parse(source.builtAt)))
      .map((source) => `iplookup_data_source_age_seconds{source="${escapeLabel(source.name)}"} ${Math.max(0, Math.floor((input.now.getTime() - Date.parse(source.builtAt)) / 1000))}`);
    metric("iplookup_data_source_age_seconds", "gauge", "Age of each source of the loaded data set, from the source's own build time.", sourceAges);
    metric("iplookup_process_start_time_seconds", "gauge", "When this process started (Unix time).", [`iplookup_process_start_time_seconds ${Math.floor(this.started / 1000)}`]);
    metric("iplookup_build_info", "gauge", "Always 1; the labels name the build and the loaded data.", [
      `iplookup_build_info{version="${escapeLabel(input.version)}",data_version="${escapeLabel(input.dataVersion)}",data_sources="${escapeLabel(input.dataSourceVersions)}"} 1`,
    ]);
    return `${lines.join("\n")}\n`;
  }
}

function escapeLabel(value: string): string {
  return value.replaceAll("\\", "\\\\").replaceAll('"', '\\"').replaceAll("\n", "\\n");
}
