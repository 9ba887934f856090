import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { CallObserver } from './grpc/server.js';

/**
 * How often the event-loop delay monitor behind `nodejs_eventloop_lag_*` samples, in ms.
 * prom-client's 10 wakes an idle process 100 times a second: ~0.9 % of a CPU per process, most
 * of an idle service's cost (docs/operations.md#observability). At 100 a loop blocked for 100 ms
 * or more is always seen, a shorter block when it holds up a sample. The gauges are the time
 * between two samples, so a loop that is never held up reads this much.
 */
export const EVENT_LOOP_SAMPLE_MS = 100;

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * Prometheus metrics of one process (prom-client): Node's defaults plus what the process
 * registers. Served on their own port at /metrics, apart from the API, so they are never public.
 */
export class Metrics {
  readonly registry = new Registry();

  constructor(service: string) {
    this.registry.setDefaultLabels({ service });
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  }

  counter<L extends string>(name: string, help: string, labelNames: readonly L[] = []) {
    return new Counter({ name, help, labelNames, registers: [this.registry] });
  }

  gauge<L extends string>(name: string, help: string, labelNames: readonly L[] = []) {
    return new Gauge({ name, help, labelNames, registers: [this.registry] });
  }

  histogram<L extends string>(name: string, help: string, labelNames: readonly L[] = []) {
    return new Histogram({ name, help, labelNames, buckets: LATENCY_BUCKETS, registers: [this.registry] });
  }

  /**
   * A gauge read when Prometheus scrapes: `read` returns the value per label value (one label,
   * `labelName`), or one number. A failing read leaves the gauge empty for that scrape.
   */
  sampled(name: string, help: string, labelName: string, read: () => Promise<Record<string, number> | number>) {
    return new Gauge({
      name,
      help,
      labelNames: [labelName],
      registers: [this.registry],
      async collect() {
        this.reset();
        const value = await read().catch(() => undefined);
        if (typeof value === 'number') this.set({ [labelName]: 'all' }, value);
        else for (const [label, v] of Object.entries(value ?? {})) this.set({ [labelName]: label }, v);
      },
    });
  }

  /** Counts and times every gRPC call a GrpcServer handles. */
  grpcObserver(): CallObserver {
    const handled = this.counter('grpc_server_handled_total', 'gRPC calls handled, by method and outcome code', ['method', 'code']);
    const seconds = this.histogram('grpc_server_handling_seconds', 'gRPC call latency', ['method']);
    return (method, code, elapsed) => {
      handled.inc({ method, code });
      seconds.observe({ method }, elapsed);
    };
  }

  /** Serves GET /metrics on host:port (0 picks a free port); resolves with the bound port. */
  async serve(host: string, port: number): Promise<{ port: number; close(): Promise<void> }> {
    const server: Server = createServer((req, res) => {
      if (req.url !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
        res.writeHead(404).end();
        return;
      }
      this.registry.metrics().then(
        (body) => res.writeHead(200, { 'content-type': this.registry.contentType }).end(body),
        () => res.writeHead(500).end(),
      );
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, resolve);
    });
    return {
      port: (server.address() as AddressInfo).port,
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  }
}
