import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { ControllerMetrics, Registry, WorkQueueMetrics, leaderStatusGauge, registerRuntimeMetrics, silentLogger } from '@podlife/core';
import { nodeReadinessMetrics } from '@podlife/node-readiness';
import { KeystoneMetrics, UnlabelledPodAudit } from '@podlife/keystone';
import { webhookRequestDuration } from '../src/webhook/metrics.js';
import { RULES_FILE } from '../src/deploy/observability.js';

const observabilityDir = fileURLToPath(new URL('../../../deploy/observability/', import.meta.url));

/** Every metric the controller process can register, each with its label names. */
function controllerRegistry(): Map<string, readonly string[]> {
  const registry = new Registry();
  new ControllerMetrics(registry, 'keystone');
  new WorkQueueMetrics(registry, 'keystone');
  leaderStatusGauge(registry);
  registerRuntimeMetrics(registry, () => []);
  nodeReadinessMetrics(registry);
  new KeystoneMetrics(registry);
  new UnlabelledPodAudit({ registry, logger: silentLogger(), informers: [] });
  webhookRequestDuration(registry);
  const names = new Map<string, readonly string[]>();
  for (const metric of registry.getMetricsAsArray() as unknown as { name: string; labelNames: string[]; constructor: { name: string } }[]) {
    const labels = metric.labelNames ?? [];
    names.set(metric.name, labels);
    if (metric.constructor.name === 'Histogram') {
      names.set(`${metric.name}_bucket`, [...labels, 'le']);
      names.set(`${metric.name}_count`, labels);
      names.set(`${metric.name}_sum`, labels);
    }
  }
  return names;
}

const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless', 'bool', 'offset', 'atan2']);
/** Labels every scraped series has, whatever the code registers. */
const TARGET_LABELS = new Set(['instance', 'job']);

/** The metric selectors of a PromQL expression: each metric name with the label names it matches on. */
function selectors(expr: string): { metric: string; labels: string[] }[] {
  const noStrings = expr.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""');
  const noGrouping = noStrings.replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ').replace(/\[[^\]]*\]/g, ' ');
  const out: { metric: string; labels: string[] }[] = [];
  for (const m of noGrouping.matchAll(/(?<![\w:.$])([a-zA-Z_:][\w:]*)(?![\w:])(\s*\{[^}]*\})?(?!\s*\()/g)) {
    const metric = m[1]!;
    if (KEYWORDS.has(metric)) continue;
    const labels = [...(m[2] ?? '').matchAll(/([a-zA-Z_]\w*)\s*(?:=~|!~|!=|=)/g)].map((l) => l[1]!);
    out.push({ metric, labels });
  }
  return out;
}

function problems(where: string, expr: string, registry: Map<string, readonly string[]>): string[] {
  const found = selectors(expr);
  if (found.length === 0) return [`${where}: no metric in ${expr}`];
  return found.flatMap(({ metric, labels }) => {
    const known = registry.get(metric);
    if (!known) return [`${where}: ${metric} is not registered by the controller`];
    return labels.filter((l) => !known.includes(l) && !TARGET_LABELS.has(l)).map((l) => `${where}: ${metric} has no label ${l} (it has ${known.join(', ') || 'none'})`);
  });
}

describe('observability: the dashboard and the alerts name only what the controller exports', () => {
  const registry = controllerRegistry();

  describe('reading metric selectors out of PromQL', () => {
    it('finds names inside functions and aggregations, not the functions, keywords, labels or durations', () =>
      assert.deepEqual(selectors('histogram_quantile(0.99, sum by (le) (rate(a_seconds_bucket{route="/x"}[5m]))) > 1 and on (rule) b offset 5m'), [
        { metric: 'a_seconds_bucket', labels: ['route'] },
        { metric: 'b', labels: [] },
      ]));
    it('reads every matcher operator and ignores what the quoted values hold', () =>
      assert.deepEqual(selectors('c{state=~"a|b",x!="y{z}",w!~"q"} / d'), [{ metric: 'c', labels: ['state', 'x', 'w'] }, { metric: 'd', labels: [] }]));
    it('a made-up metric or label is reported', () => {
      assert.deepEqual(problems('t', 'rate(podlife_nonexistent_total[5m])', registry), ['t: podlife_nonexistent_total is not registered by the controller']);
      assert.match(problems('t', 'podlife_keystone_stops_total{reason="x"}', registry)[0] ?? '', /has no label reason \(it has strategy, result\)/);
    });
  });

  const rules = parse(readFileSync(observabilityDir + RULES_FILE, 'utf8')) as { groups: { rules: { alert: string; expr: string }[] }[] };
  for (const rule of rules.groups.flatMap((g) => g.rules)) {
    it(`alert ${rule.alert}`, () => assert.deepEqual(problems(`alert ${rule.alert}`, rule.expr, registry), []));
  }

  const dashboard = JSON.parse(readFileSync(`${observabilityDir}podlife-dashboard.json`, 'utf8')) as { panels: { title: string; type: string; targets?: { expr: string }[] }[] };
  for (const panel of dashboard.panels.filter((p) => p.type !== 'row')) {
    it(`dashboard panel "${panel.title}"`, () => {
      assert.ok((panel.targets ?? []).length > 0, 'a panel without a query');
      for (const t of panel.targets ?? []) assert.deepEqual(problems(`panel ${panel.title}`, t.expr, registry), []);
    });
  }

  it('every stop series exists at 0 before the first stop, so that rate() sees a first failure', async () => {
    const registry = new Registry();
    new KeystoneMetrics(registry);
    const stops = (await registry.getSingleMetric('podlife_keystone_stops_total')!.get()).values;
    assert.equal(stops.length, 12);
    assert.ok(stops.every((v) => v.value === 0));
    assert.ok(stops.some((v) => v.labels.strategy === 'exec' && v.labels.result === 'failure'));
  });

  it('the dashboard covers the metrics the controller exists for', () => {
    const used = new Set(dashboard.panels.flatMap((p) => (p.targets ?? []).flatMap((t) => selectors(t.expr).map((s) => s.metric.replace(/_(bucket|count|sum)$/, '')))));
    const podlife = [...registry.keys()].filter((n) => n.startsWith('podlife_') && !/_(bucket|count|sum)$/.test(n));
    assert.deepEqual(podlife.filter((n) => !used.has(n)), []);
  });
});
