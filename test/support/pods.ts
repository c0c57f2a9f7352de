/**
 * Pods as the suites write them: a template (metadata and spec) for a Pod or a Job, with the
 * containers' podlife roles as annotations, `restartPolicy: Never` and a 30 s grace period unless
 * told, and for the simulated kubelet its script; `podOf` names a template as a Pod to create.
 */
import type { V1Container, V1Pod, V1PodSpec } from '@kubernetes/client-node';
import { SCRIPT_ANNOTATION, type PodScript } from './kubelet-script.js';
import { roleAnnotations, type Role } from './keys.js';

export interface PodTemplateOptions {
  containers: V1Container[];
  /** The podlife role of each annotated container. */
  roles?: Record<string, Role>;
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
  /** What the simulated kubelet makes of the pod (kubelet-script.ts); nothing for a real node. */
  script?: PodScript;
  restartPolicy?: string;
  /** terminationGracePeriodSeconds. */
  grace?: number;
  /** The rest of the spec: volumes, a security context, … */
  spec?: Partial<V1PodSpec>;
}

export interface PodTemplate {
  metadata: { annotations: Record<string, string>; labels?: Record<string, string> };
  spec: V1PodSpec;
}

export function podTemplate(opts: PodTemplateOptions): PodTemplate {
  const annotations: Record<string, string> = {
    ...(opts.script ? { [SCRIPT_ANNOTATION]: JSON.stringify(opts.script) } : {}),
    ...opts.annotations,
    ...roleAnnotations(opts.roles ?? {}),
  };
  return {
    metadata: { annotations, ...(opts.labels ? { labels: opts.labels } : {}) },
    spec: {
      restartPolicy: opts.restartPolicy ?? 'Never',
      terminationGracePeriodSeconds: opts.grace ?? 30,
      ...opts.spec,
      containers: opts.containers,
    },
  };
}

/** A template as a Pod named `name`, ready to create. */
export function podOf(name: string, template: PodTemplate): V1Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, ...template.metadata }, spec: template.spec };
}
