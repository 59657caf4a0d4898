/**
 * Prometheus metrics: Moleculer's own (request rates and latencies per action, process, event
 * loop) through its Prometheus reporter, plus the domain's counters, all served by the health
 * server's `/metrics` (lib/health.ts) rather than by a second HTTP port of the reporter's own.
 *
 * A service counts a domain fact with `countDomain(broker, "readings.ingested", { pipeline_id })`.
 * A new counter is one line in DOMAIN_COUNTERS; every node registers all of them at start, so a
 * scrape lists each counter (at 0) before its first increment.
 */
import { MetricReporters, type BrokerOptions, type MetricRegistry, type ServiceBroker } from "moleculer";

interface CounterSpec {
  description: string;
  labelNames: readonly string[];
}

export const DOMAIN_COUNTERS = {
  "readings.ingested": { description: "Readings accepted from edge gateways", labelNames: ["pipeline_id"] },
  "readings.rejected": { description: "Readings refused (unmapped monitor or tag, bad value)", labelNames: ["pipeline_id"] },
  "alerts.opened": { description: "Alerts opened by watcher triggers", labelNames: ["severity"] },
  "alerts.closed": { description: "Alerts closed when their condition stopped holding", labelNames: ["severity"] },
  "notifications.sent": { description: "Notifications delivered", labelNames: ["medium"] },
  "notifications.failed": { description: "Notification deliveries that failed", labelNames: ["medium"] },
  "notifications.skipped": { description: "Notifications recorded but not sent: their medium is not configured", labelNames: ["medium"] },
} as const satisfies Record<string, CounterSpec>;

export type DomainCounter = keyof typeof DOMAIN_COUNTERS;
export type DomainLabels<N extends DomainCounter> = Partial<Record<(typeof DOMAIN_COUNTERS)[N]["labelNames"][number], string>>;

/** Prefix of every domain metric: `ims.alerts.opened` is scraped as `ims_alerts_opened_total`. */
const PREFIX = "ims.";
export const metricName = (name: DomainCounter): string => `${PREFIX}${name}.total`;

/** Counts a domain fact on this node; a no-op where metrics are disabled (a bare test broker). */
export function countDomain<N extends DomainCounter>(broker: ServiceBroker, name: N, labels: DomainLabels<N> = {}, value = 1): void {
  if (!broker.isMetricsEnabled()) return;
  if (!broker.metrics.hasMetric(metricName(name))) registerDomainCounters(broker.metrics);
  broker.metrics.increment(metricName(name), labels, value);
}

export function registerDomainCounters(registry: MetricRegistry): void {
  for (const [name, spec] of Object.entries(DOMAIN_COUNTERS) as [DomainCounter, CounterSpec][]) {
    if (registry.hasMetric(metricName(name))) continue;
    registry.register({
      type: "counter",
      name: metricName(name),
      description: spec.description,
      labelNames: [...spec.labelNames],
    });
  }
}

/**
 * Moleculer's Prometheus reporter without its HTTP server: the health server asks it for the
 * text. One port per pod (HEALTH_PORT) is simpler to probe, scrape and firewall than two.
 */
export class EmbeddedPrometheusReporter extends MetricReporters.Prometheus {
  override init(registry: MetricRegistry): void {
    // BaseReporter.init only; Prometheus.init would listen on its own port.
    MetricReporters.Base.prototype.init.call(this, registry);
    const labels = this.opts.defaultLabels;
    (this as unknown as { defaultLabels: unknown }).defaultLabels = typeof labels === "function" ? labels.call(this, registry) : labels;
    registerDomainCounters(registry);
  }

  override stop(): Promise<void> {
    return Promise.resolve();
  }

  /** The scrape: Moleculer's metrics, then each domain counter that has not counted yet, at 0. */
  render(): string {
    const text = this.generatePrometheusResponse();
    const zeros: string[] = [];
    for (const [name, spec] of Object.entries(DOMAIN_COUNTERS) as [DomainCounter, CounterSpec][]) {
      const metric = this.registry.getMetric(metricName(name));
      if (!metric || metric.snapshot().length > 0) continue;
      const exposed = this.formatMetricName(metricName(name)).replace(/[.-]/g, "_");
      zeros.push(`# HELP ${exposed} ${spec.description}`, `# TYPE ${exposed} counter`, `${exposed}${this.labelsToStr({})} 0`, "");
    }
    return text + (zeros.length ? `\n${zeros.join("\n")}` : "");
  }
}

/** The reporter of a broker, when its metrics are on (moleculer.config.ts puts one in). */
export function prometheusReporterOf(broker: ServiceBroker): EmbeddedPrometheusReporter | undefined {
  const reporters = (broker.metrics as unknown as { reporter?: unknown[] }).reporter ?? [];
  return reporters.find((r): r is EmbeddedPrometheusReporter => r instanceof EmbeddedPrometheusReporter);
}

/** The broker's metrics options: on, with one embedded reporter per broker (scraped at HEALTH_PORT/metrics). */
export function metricsOptions(): BrokerOptions["metrics"] {
  // Moleculer accepts a reporter instance; its typings only list the names.
  const reporter = new EmbeddedPrometheusReporter() as unknown as "Prometheus";
  return { enabled: true, reporter: [reporter] };
}
