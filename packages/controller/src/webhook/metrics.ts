/**
 * The webhook server's metric:
 *   podlife_webhook_request_duration_seconds{route,status}   request latency by route and HTTP status
 *
 * Guarantees: created once per registry (a second server on the same registry shares it); its
 * series are bounded: `route` is a registered route or `other` (the server never passes a
 * request's own path), `status` one of the few the server answers.
 */
import { Histogram, type Registry } from 'prom-client';

export const WEBHOOK_DURATION_METRIC = 'podlife_webhook_request_duration_seconds';

export function webhookRequestDuration(registry: Registry): Histogram<'route' | 'status'> {
  return (
    (registry.getSingleMetric(WEBHOOK_DURATION_METRIC) as Histogram<'route' | 'status'> | undefined) ??
    new Histogram({
      name: WEBHOOK_DURATION_METRIC,
      help: 'Webhook request latency by route and HTTP status',
      labelNames: ['route', 'status'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5],
      registers: [registry],
    })
  );
}
