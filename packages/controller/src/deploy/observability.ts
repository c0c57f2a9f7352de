/**
 * What a team adopts to watch podlife: the alerting rules (a plain Prometheus rule file and the
 * Prometheus operator's PrometheusRule) and a Grafana dashboard, written to deploy/observability/
 * and into the chart.
 *
 * Guarantees:
 * - every expression names only metrics, and matches only labels, that the controller registers
 *   (a unit test checks each against the registries; the integration suite runs
 *   `promtool check rules` and `promtool test rules` on the rule file);
 * - each alert says what it means for the cluster and what to look at, in its annotations.
 */
import { stringify } from 'yaml';
import { APP_LABELS, WEBHOOK_PATH, defaultDeployOptions } from './manifests.js';

export const RULES_FILE = 'podlife.rules.yaml';

export interface AlertRule {
  alert: string;
  expr: string;
  for: string;
  labels: { severity: 'warning' | 'critical' };
  annotations: { summary: string; description: string };
}

export interface RuleGroup {
  name: string;
  rules: AlertRule[];
}

/** The node-readiness gate states in which a node still carries the rule's taint. */
export const HELD_STATES = ['failing', 'unknown', 'missing'] as const;
/** How long a node may be held before it is worth a page: the node has been useless that long. */
export const NODES_HELD_FOR = '15m';
/** KEP-5233's SLO for removing a readiness taint once its conditions hold. */
export const TAINT_REMOVAL_SLO_SECONDS = 10;

const webhook = `route="${WEBHOOK_PATH}"`;

/** The Prometheus alerting rules shipped under deploy/observability. */
export function alertRuleGroups(): RuleGroup[] {
  return [
    {
      name: 'podlife.keystone',
      rules: [
        {
          alert: 'PodlifeStopsFailing',
          expr: [
            'sum by (strategy) (rate(podlife_keystone_stops_total{result="failure"}[15m]))',
            '  / sum by (strategy) (rate(podlife_keystone_stops_total{result=~"success|failure"}[15m]))',
            '  > 0.05',
          ].join('\n'),
          for: '5m',
          labels: { severity: 'warning' },
          annotations: {
            summary: 'podlife fails more than 5% of its {{ $labels.strategy }} stops',
            description:
              'Over the last 15 minutes {{ $value | humanizePercentage }} of the containers podlife stopped with the {{ $labels.strategy }} strategy were not stopped: ' +
              'their pods keep running (Jobs do not complete). The StopFailed Events on those pods name the reason; `podlife explain <pod>` shows where each is.',
          },
        },
      ],
    },
    {
      name: 'podlife.node-readiness',
      rules: [
        {
          alert: 'PodlifeCircuitBreakerOpen',
          expr: 'max by (rule) (podlife_node_readiness_circuit_breaker_open) == 1',
          for: '5m',
          labels: { severity: 'critical' },
          annotations: {
            summary: 'Readiness rule {{ $labels.rule }} has stopped adding taints',
            description:
              'The circuit breaker of NodeReadinessRule {{ $labels.rule }} is open: more of its nodes would be tainted than the rule allows, so podlife adds no taint. ' +
              'Usually the agent that sets the condition is failing on many nodes at once; `podlife nodes` shows which gates hold them.',
          },
        },
        {
          alert: 'PodlifeNodesHeld',
          expr: `sum by (rule) (podlife_node_readiness_nodes{state=~"${HELD_STATES.join('|')}"}) > 0`,
          for: NODES_HELD_FOR,
          labels: { severity: 'warning' },
          annotations: {
            summary: '{{ $value }} nodes held by readiness rule {{ $labels.rule }} for 15 minutes',
            description:
              'Nodes selected by {{ $labels.rule }} have carried its taint for 15 minutes because the conditions it waits for are False, Unknown, stale or missing: ' +
              'no new pod schedules there. `podlife explain node <name>` says which condition and what its agent reported.',
          },
        },
        {
          alert: 'PodlifeTaintRemovalSlow',
          expr: [
            'histogram_quantile(0.99, sum by (le) (rate(podlife_node_readiness_taint_removal_seconds_bucket[10m])))',
            `  > ${TAINT_REMOVAL_SLO_SECONDS}`,
          ].join('\n'),
          for: '10m',
          labels: { severity: 'warning' },
          annotations: {
            summary: `Readiness taints take more than ${TAINT_REMOVAL_SLO_SECONDS}s to come off (p99)`,
            description:
              `The 99th percentile from a readiness gate's conditions holding to its taint's removal is {{ $value | humanizeDuration }}, over the ${TAINT_REMOVAL_SLO_SECONDS} s SLO of KEP-5233: ` +
              'nodes wait to receive pods. Look at the controller\'s API latency, its node-readiness work queue (workqueue_depth) and rate-limited additions.',
          },
        },
      ],
    },
    {
      name: 'podlife.webhook',
      rules: [
        {
          alert: 'PodlifeWebhookErrors',
          expr: [
            `sum(rate(podlife_webhook_request_duration_seconds_count{${webhook},status!~"2.."}[5m]))`,
            `  / sum(rate(podlife_webhook_request_duration_seconds_count{${webhook}}[5m]))`,
            '  > 0.05',
          ].join('\n'),
          for: '5m',
          labels: { severity: 'warning' },
          annotations: {
            summary: 'podlife\'s webhook answers {{ $value | humanizePercentage }} of admission requests with an error',
            description:
              'The webhook fails open (failurePolicy Ignore), so pods are still created, but unconverted: their sidecars are not native, and podlife stops them itself. ' +
              'The controller\'s log (component webhook) says why; a certificate the API server does not trust shows in the API server\'s log instead.',
          },
        },
        {
          alert: 'PodlifeWebhookSlow',
          expr: [
            `histogram_quantile(0.99, sum by (le) (rate(podlife_webhook_request_duration_seconds_bucket{${webhook}}[5m])))`,
            '  > 1',
          ].join('\n'),
          for: '10m',
          labels: { severity: 'warning' },
          annotations: {
            summary: 'podlife\'s webhook takes more than 1s to answer (p99)',
            description:
              'Every opted-in pod creation waits for it, and past the webhook\'s 5 s timeout the pod is admitted unconverted. Look at the controller\'s CPU and memory (its heap near the limit makes it slow).',
          },
        },
      ],
    },
    {
      name: 'podlife.controller',
      rules: [
        {
          alert: 'PodlifeNoLeader',
          expr: 'sum(leader_election_master_status{name="podlife-controller"}) < 1',
          for: '5m',
          labels: { severity: 'critical' },
          annotations: {
            summary: 'No podlife controller holds the leader lease',
            description:
              'Replicas are running but none leads: no sidecar is stopped and no readiness taint is removed. The Lease podlife-controller in the controller\'s namespace says who held it last; the controller\'s log says why it cannot renew.',
          },
        },
      ],
    },
  ];
}

// ---- the dashboard ----

interface Target {
  expr: string;
  legendFormat: string;
}

interface Panel {
  title: string;
  description: string;
  type: 'timeseries' | 'stat';
  unit: string;
  targets: Target[];
  width?: number;
}

const q = (expr: string, legendFormat: string): Target => ({ expr, legendFormat });
const quantiles = (metric: string, matchers = ''): Target[] =>
  [0.5, 0.9, 0.99].map((p) => q(`histogram_quantile(${p}, sum by (le) (rate(${metric}_bucket${matchers}[$__rate_interval])))`, `p${Math.round(p * 100)}`));

export const DASHBOARD_ROWS: { title: string; panels: Panel[] }[] = [
  {
    title: 'Keystone: stopping containers',
    panels: [
      { title: 'Stops by strategy and result', description: 'Stop actions issued per second (podlife_keystone_stops_total).', type: 'timeseries', unit: 'ops', targets: [q('sum by (strategy, result) (rate(podlife_keystone_stops_total[$__rate_interval]))', '{{strategy}} {{result}}')] },
      { title: 'Stop latency', description: "From the triggering container's finishedAt to the last stopped container's finishedAt.", type: 'timeseries', unit: 's', targets: quantiles('podlife_keystone_stop_latency_seconds') },
      { title: 'Invalid pods', description: 'Pods found with invalid lifecycle annotations, per second: their owners see a Warning Event and podlife.dev/LifecycleValid=False.', type: 'timeseries', unit: 'ops', targets: [q('sum(rate(podlife_keystone_invalid_pods_total[$__rate_interval]))', 'invalid pods')] },
      { title: 'Annotated pods without the managed label', description: 'A controller with --managed-pods-only does not see these (docs/adr/0131).', type: 'stat', unit: 'short', targets: [q('max(podlife_unlabelled_annotated_pods)', 'pods')] },
    ],
  },
  {
    title: 'Webhook',
    panels: [
      { title: 'Admission requests by status', description: `Requests to ${WEBHOOK_PATH} per second, by HTTP status.`, type: 'timeseries', unit: 'reqps', targets: [q(`sum by (status) (rate(podlife_webhook_request_duration_seconds_count{${webhook}}[$__rate_interval]))`, '{{status}}')] },
      { title: 'Admission latency', description: `Time to answer ${WEBHOOK_PATH} (the API server waits at most 5 s, then admits the pod unconverted).`, type: 'timeseries', unit: 's', targets: quantiles('podlife_webhook_request_duration_seconds', `{${webhook}}`) },
    ],
  },
  {
    title: 'Node readiness gates',
    panels: [
      { title: 'Nodes by gate state', description: 'Nodes selected by each rule, by the state of its gate (failing, unknown and missing hold the taint).', type: 'timeseries', unit: 'short', targets: [q('sum by (rule, state) (podlife_node_readiness_nodes)', '{{rule}} {{state}}')] },
      { title: 'Taint removal latency', description: `From the gate's conditions holding to the taint's removal (KEP-5233's SLO: ${TAINT_REMOVAL_SLO_SECONDS} s).`, type: 'timeseries', unit: 's', targets: quantiles('podlife_node_readiness_taint_removal_seconds') },
      { title: 'Taint operations', description: 'Taint writes per second, by rule and operation.', type: 'timeseries', unit: 'ops', targets: [q('sum by (rule, operation) (rate(podlife_node_readiness_operations_total[$__rate_interval]))', '{{rule}} {{operation}}')] },
      { title: 'Failures and refusals', description: 'Failed node writes and refused taint additions (rate limit, circuit breaker), by reason.', type: 'timeseries', unit: 'ops', targets: [q('sum by (rule, reason) (rate(podlife_node_readiness_failures_total[$__rate_interval]))', '{{rule}} {{reason}}')] },
      { title: 'Circuit breaker open', description: '1 while a rule adds no taints because too many of its nodes would be tainted.', type: 'timeseries', unit: 'short', targets: [q('max by (rule) (podlife_node_readiness_circuit_breaker_open)', '{{rule}}')] },
    ],
  },
  {
    title: 'Controller',
    panels: [
      { title: 'Reconciles by result', description: 'Per controller and result.', type: 'timeseries', unit: 'ops', targets: [q('sum by (controller, result) (rate(controller_runtime_reconcile_total[$__rate_interval]))', '{{controller}} {{result}}')] },
      { title: 'Work queue depth', description: 'Keys waiting in each work queue.', type: 'timeseries', unit: 'short', targets: [q('max by (name) (workqueue_depth)', '{{name}}')] },
      { title: 'Leader', description: '1 on the replica holding the lease.', type: 'timeseries', unit: 'short', targets: [q('max by (instance) (leader_election_master_status{name="podlife-controller"})', '{{instance}}')] },
      { title: 'Memory', description: 'Resident memory and V8 heap per replica (the limit is the size in deploy/README.md).', type: 'timeseries', unit: 'bytes', targets: [q('max by (instance) (process_resident_memory_bytes)', 'rss {{instance}}'), q('max by (instance) (nodejs_heap_size_used_bytes)', 'heap {{instance}}')] },
      { title: 'Cached objects', description: "Objects in each informer's cache.", type: 'timeseries', unit: 'short', targets: [q('max by (informer) (podlife_informer_cached_objects)', '{{informer}}')] },
    ],
  },
];

const datasource = { type: 'prometheus', uid: '${datasource}' };

/** The Grafana dashboard shipped under deploy/observability. */
export function dashboard(): Record<string, unknown> {
  const panels: Record<string, unknown>[] = [];
  let id = 1;
  let y = 0;
  for (const row of DASHBOARD_ROWS) {
    panels.push({ id: id++, type: 'row', title: row.title, collapsed: false, gridPos: { x: 0, y, w: 24, h: 1 }, panels: [] });
    y += 1;
    let x = 0;
    for (const p of row.panels) {
      const w = p.width ?? 8;
      if (x + w > 24) {
        x = 0;
        y += 8;
      }
      panels.push({
        id: id++,
        type: p.type,
        title: p.title,
        description: p.description,
        datasource,
        gridPos: { x, y, w, h: 8 },
        fieldConfig: { defaults: { unit: p.unit }, overrides: [] },
        options: p.type === 'stat' ? { reduceOptions: { calcs: ['lastNotNull'] } } : { legend: { displayMode: 'list', placement: 'bottom' }, tooltip: { mode: 'multi' } },
        targets: p.targets.map((t, i) => ({ refId: String.fromCharCode(65 + i), datasource, expr: t.expr, legendFormat: t.legendFormat })),
      });
      x += w;
    }
    y += 8;
  }
  return {
    title: 'podlife',
    uid: 'podlife',
    description: "podlife controller: keystone stops, the admission webhook, node readiness gates, the controller's own health.",
    tags: ['podlife', 'kubernetes'],
    editable: true,
    schemaVersion: 39,
    time: { from: 'now-6h', to: 'now' },
    refresh: '30s',
    templating: { list: [{ name: 'datasource', label: 'Data source', type: 'datasource', query: 'prometheus', current: {}, hide: 0 }] },
    annotations: { list: [] },
    panels,
  };
}

export function dashboardJson(): string {
  return `${JSON.stringify(dashboard(), null, 2)}\n`;
}

/** Every PromQL expression the rules and the dashboard hold. */
export function observabilityExpressions(): { where: string; expr: string }[] {
  return [
    ...alertRuleGroups().flatMap((g) => g.rules.map((r) => ({ where: `alert ${r.alert}`, expr: r.expr }))),
    ...DASHBOARD_ROWS.flatMap((row) => row.panels.flatMap((p) => p.targets.map((t) => ({ where: `panel ${p.title}`, expr: t.expr })))),
  ];
}

const generated = '# Generated by packages/controller/scripts/render-deploy.ts — do not edit by hand.\n';

/** The files of deploy/observability (paths inside it), except the rules' unit tests, which are written by hand. */
export function observabilityFiles(): { path: string; content: string }[] {
  const groups = alertRuleGroups();
  const prometheusRule = {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: { name: 'podlife', namespace: defaultDeployOptions.namespace, labels: { ...APP_LABELS } },
    spec: { groups },
  };
  return [
    { path: RULES_FILE, content: `${generated}# Prometheus rule file (rule_files:); for the Prometheus operator use prometheusrule.yaml.\n${stringify({ groups }, { lineWidth: 0 })}` },
    { path: 'prometheusrule.yaml', content: `${generated}# The rules of ${RULES_FILE} as a PrometheusRule for the Prometheus operator.\n${stringify(prometheusRule, { lineWidth: 0 })}` },
    { path: 'podlife-dashboard.json', content: dashboardJson() },
  ];
}
