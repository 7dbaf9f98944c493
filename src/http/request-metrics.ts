/*
 * The two per-request series of /metrics, ugs_http_requests_total and
 * ugs_http_request_duration_seconds, counted without prom-client on the request path. prom-client's
 * Counter and Histogram build a label hash string, validate the label names and allocate a label
 * object on every observation; here a response is three Map lookups and a few additions, and the
 * figures take prom-client's shape only when /metrics is scraped. `get()` answers exactly what
 * prom-client's Counter and Histogram answer for the same observations (the same objects, in the
 * same order, series in the order they were first seen), so the text of /metrics and the cluster
 * aggregation under --workers (which sums these objects) are unchanged (docs/performance-history.md).
 */

type RouteLabels = { route: string; method: string };
type StatusLabels = RouteLabels & { status: string };

interface StatusSeries {
  labels: StatusLabels;
  value: number;
}

interface RouteSeries {
  labels: RouteLabels;
  /** Observations per bucket (not cumulative), in the order of the upper bounds. */
  buckets: number[];
  sum: number;
  count: number;
  statuses: Map<number, StatusSeries>;
}

/** A metric's figures as prom-client's get() answers them. */
interface MetricFigures {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  values: object[];
  aggregator: 'sum';
}

/** A metric object as a prom-client Registry takes it: what Registry.merge, metrics() and getMetricsAsJSON() read. */
export interface CollectedMetric {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  get(): Promise<MetricFigures>;
  getForPromString?(): Promise<MetricFigures>;
}

export interface RequestMetrics {
  /** One answered request: its route pattern (or 'unmatched'), method, status and duration in seconds. */
  observe(route: string, method: string, status: number, seconds: number): void;
  /** ugs_http_requests_total, as a prom-client Counter with labels route, method and status. */
  readonly requests: CollectedMetric;
  /** ugs_http_request_duration_seconds, as a prom-client Histogram with labels route and method. */
  readonly latency: CollectedMetric;
}

export function createRequestMetrics(options: {
  requests: { name: string; help: string };
  latency: { name: string; help: string; buckets: readonly number[] };
}): RequestMetrics {
  const bounds = [...options.latency.buckets];
  const byRoute = new Map<string, Map<string, RouteSeries>>();
  // First seen first, as prom-client's label hash maps keep them.
  const routeSeries: RouteSeries[] = [];
  const statusSeries: StatusSeries[] = [];

  const seriesOf = (route: string, method: string): RouteSeries => {
    let byMethod = byRoute.get(route);
    if (byMethod === undefined) byRoute.set(route, (byMethod = new Map()));
    let series = byMethod.get(method);
    if (series === undefined) {
      series = { labels: { route, method }, buckets: bounds.map(() => 0), sum: 0, count: 0, statuses: new Map() };
      byMethod.set(method, series);
      routeSeries.push(series);
    }
    return series;
  };

  const { name: latencyName, help: latencyHelp } = options.latency;
  const bucketName = `${latencyName}_bucket`;
  // prom-client's Histogram.getForPromString: per series its cumulative buckets, +Inf, sum and count,
  // the series' labels shared by all of them.
  const histogramValues = () =>
    routeSeries.flatMap(({ labels, buckets, sum, count }) => {
      let cumulative = 0;
      return [
        ...bounds.map((le, index) => {
          cumulative += buckets[index]!;
          return { labels: { le }, sharedLabels: labels, value: cumulative, metricName: bucketName, exemplar: null };
        }),
        { labels: { le: '+Inf' }, sharedLabels: labels, value: count, metricName: bucketName, exemplar: null },
        { labels: {}, sharedLabels: labels, value: sum, metricName: `${latencyName}_sum`, exemplar: undefined },
        { labels: {}, sharedLabels: labels, value: count, metricName: `${latencyName}_count`, exemplar: undefined },
      ];
    });

  return {
    observe(route, method, status, seconds) {
      const series = seriesOf(route, method);
      let counted = series.statuses.get(status);
      if (counted === undefined) {
        counted = { labels: { route, method, status: String(status) }, value: 0 };
        series.statuses.set(status, counted);
        statusSeries.push(counted);
      }
      counted.value += 1;
      series.sum += seconds;
      series.count += 1;
      // Above the last bound: counted in +Inf (the count) only, as prom-client does.
      for (let index = 0; index < bounds.length; index++) {
        if (seconds <= bounds[index]!) {
          series.buckets[index]! += 1;
          break;
        }
      }
    },
    requests: {
      ...options.requests,
      type: 'counter',
      aggregator: 'sum',
      get: async () => ({
        help: options.requests.help,
        name: options.requests.name,
        type: 'counter',
        values: statusSeries.map(({ value, labels }) => ({ value, labels })),
        aggregator: 'sum',
      }),
    },
    latency: {
      name: latencyName,
      help: latencyHelp,
      type: 'histogram',
      aggregator: 'sum',
      // Histogram.get: each value with its shared labels merged into its own (`le` first).
      get: async () => ({
        name: latencyName,
        help: latencyHelp,
        type: 'histogram',
        values: histogramValues().map(({ labels, sharedLabels, ...value }) => ({
          ...value,
          labels: { ...labels, ...sharedLabels },
        })),
        aggregator: 'sum',
      }),
      getForPromString: async () => ({
        name: latencyName,
        help: latencyHelp,
        type: 'histogram',
        values: histogramValues(),
        aggregator: 'sum',
      }),
    },
  };
}
