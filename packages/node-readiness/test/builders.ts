import type { V1Node, V1NodeCondition, V1Taint } from '@kubernetes/client-node';
import { CompletedAnnotation, ManagedTaintsAnnotation, nodeReadinessRule } from '../src/index.js';
import type { NodeReadinessRule, NodeReadinessRuleSpec, RuleCondition, TaintEffect } from '../src/index.js';

export const T0 = Date.parse('2025-06-01T12:00:00Z');
export const iso = (ms: number): string => new Date(ms).toISOString();

export class NodeBuilder {
  private readonly n: V1Node;
  constructor(name: string) {
    this.n = { metadata: { name, resourceVersion: '1', labels: {} }, spec: {}, status: { conditions: [] } };
  }
  labels(labels: Record<string, string>): this {
    this.n.metadata!.labels = { ...this.n.metadata!.labels, ...labels };
    return this;
  }
  taint(key: string, effect: TaintEffect = 'NoSchedule'): this {
    (this.n.spec!.taints ??= []).push({ key, effect } as V1Taint);
    return this;
  }
  condition(type: string, status: 'True' | 'False' | 'Unknown', at: { since?: number; heartbeat?: number } = {}): this {
    const c: V1NodeCondition = { type, status };
    const since = at.since ?? T0 - 60_000;
    c.lastTransitionTime = iso(since) as unknown as Date;
    c.lastHeartbeatTime = iso(at.heartbeat ?? since) as unknown as Date;
    this.n.status!.conditions!.push(c);
    return this;
  }
  managed(owners: Record<string, string>): this {
    return this.annotate(ManagedTaintsAnnotation, JSON.stringify(owners));
  }
  completed(gates: Record<string, string>): this {
    return this.annotate(CompletedAnnotation, JSON.stringify(gates));
  }
  annotate(key: string, value: string): this {
    this.n.metadata!.annotations = { ...this.n.metadata!.annotations, [key]: value };
    return this;
  }
  rv(v: string): this {
    this.n.metadata!.resourceVersion = v;
    return this;
  }
  build(): V1Node {
    return structuredClone(this.n);
  }
}
export const node = (name = 'node-1'): NodeBuilder => new NodeBuilder(name);

export class RuleBuilder {
  private readonly spec: NodeReadinessRuleSpec;
  private created = T0 - 3_600_000;
  private deleting = false;
  private finalizers: string[] | undefined;
  constructor(private readonly name: string) {
    this.spec = {
      conditions: [{ type: 'GPUReady' }],
      enforcementMode: 'bootstrap-only',
      taint: { key: 'readiness.k8s.io/gpu', effect: 'NoSchedule' },
      nodeSelector: { matchLabels: { pool: 'gpu' } },
    };
  }
  continuous(debounce = '30s'): this {
    this.spec.enforcementMode = 'continuous';
    this.spec.debounce = debounce;
    return this;
  }
  bootstrap(): this {
    this.spec.enforcementMode = 'bootstrap-only';
    return this;
  }
  conditions(...conditions: RuleCondition[]): this {
    this.spec.conditions = conditions;
    return this;
  }
  anyOf(): this {
    this.spec.match = 'anyOf';
    return this;
  }
  taint(key: string, effect: TaintEffect = 'NoSchedule'): this {
    this.spec.taint = { key, effect };
    return this;
  }
  selector(matchLabels: Record<string, string>): this {
    this.spec.nodeSelector = { matchLabels };
    return this;
  }
  maxAge(d: string): this {
    this.spec.maxConditionAge = d;
    return this;
  }
  dryRun(): this {
    this.spec.dryRun = true;
    return this;
  }
  guardrails(g: NodeReadinessRuleSpec['guardrails']): this {
    this.spec.guardrails = g;
    return this;
  }
  with(patch: Partial<NodeReadinessRuleSpec>): this {
    Object.assign(this.spec, patch);
    return this;
  }
  createdAt(ms: number): this {
    this.created = ms;
    return this;
  }
  beingDeleted(): this {
    this.deleting = true;
    return this;
  }
  finalizer(...f: string[]): this {
    this.finalizers = f;
    return this;
  }
  build(): NodeReadinessRule {
    const r = nodeReadinessRule(this.name, structuredClone(this.spec));
    r.metadata = {
      name: this.name,
      resourceVersion: '7',
      generation: 1,
      creationTimestamp: iso(this.created) as unknown as Date,
      ...(this.deleting ? { deletionTimestamp: iso(T0) as unknown as Date } : {}),
      ...(this.finalizers ? { finalizers: this.finalizers } : {}),
    };
    return r;
  }
}
export const rule = (name = 'gpu'): RuleBuilder => new RuleBuilder(name);

export const GPU = 'readiness.k8s.io/gpu';
export const gpuNode = (name = 'node-1'): NodeBuilder => node(name).labels({ pool: 'gpu' });
