/**
 * Builders for podlife's CustomResourceDefinitions: the envelope of a cluster-scoped resource
 * served in one version with a status subresource, the `conditions` list of a status in the
 * shape of metav1.Condition, and a label selector in the shape of metav1.LabelSelector. The
 * rule-specific parts (spec schema, counts, printer columns, what a selector must select) stay
 * with each resource.
 *
 * Guarantees: plain objects with their keys in the order the rendered manifests show them, built
 * anew on every call (a caller may change its copy); nothing is checked here — the API server
 * validates a CRD when it is applied.
 */

/** What a cluster-scoped, single-version resource with a status subresource needs to be described. */
export interface ClusterCrdOptions {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly singular: string;
  readonly shortNames: readonly string[];
  /** `kubectl get` columns, in order. */
  readonly printerColumns: readonly Record<string, unknown>[];
  /** The description of the whole object. */
  readonly description: string;
  readonly spec: Record<string, unknown>;
  readonly status: Record<string, unknown>;
}

/** A CustomResourceDefinition as `clusterCrd` builds it. */
export interface ClusterCrd {
  readonly apiVersion: 'apiextensions.k8s.io/v1';
  readonly kind: 'CustomResourceDefinition';
  readonly metadata: { readonly name: string };
  readonly spec: {
    readonly group: string;
    readonly scope: 'Cluster';
    readonly names: { readonly plural: string; readonly singular: string; readonly kind: string; readonly listKind: string; readonly shortNames: string[] };
    readonly versions: {
      readonly name: string;
      readonly served: boolean;
      readonly storage: boolean;
      readonly subresources: { readonly status: Record<string, never> };
      readonly additionalPrinterColumns: Record<string, unknown>[];
      readonly schema: { readonly openAPIV3Schema: Record<string, unknown> };
    }[];
  };
}

/** The CustomResourceDefinition of a cluster-scoped resource served (and stored) in one version. */
export function clusterCrd(o: ClusterCrdOptions): ClusterCrd {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${o.plural}.${o.group}` },
    spec: {
      group: o.group,
      scope: 'Cluster',
      names: { plural: o.plural, singular: o.singular, kind: o.kind, listKind: `${o.kind}List`, shortNames: [...o.shortNames] },
      versions: [
        {
          name: o.version,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [...o.printerColumns],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: o.description,
              required: ['spec'],
              properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: { type: 'object' }, spec: o.spec, status: o.status },
            },
          },
        },
      ],
    },
  };
}

/**
 * A status's `conditions`: at most 8, one per type (a map list keyed by `type`), each with
 * metav1.Condition's bounds; `observedGeneration` per condition only where the resource writes it.
 */
export function conditionsSchema(options: { readonly observedGeneration?: boolean } = {}): Record<string, unknown> {
  return {
    type: 'array',
    maxItems: 8,
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': ['type'],
    items: {
      type: 'object',
      required: ['type', 'status'],
      properties: {
        type: { type: 'string', maxLength: 316 },
        status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
        reason: { type: 'string', maxLength: 1024 },
        message: { type: 'string', maxLength: 32768 },
        lastTransitionTime: { type: 'string', format: 'date-time' },
        ...(options.observedGeneration ? { observedGeneration: { type: 'integer', format: 'int64' } } : {}),
      },
    },
  };
}

/**
 * A metav1.LabelSelector with bounds: at most 32 labels and 32 expressions, names and values of
 * Kubernetes' lengths, and In/NotIn with values, Exists/DoesNotExist without (CEL, per expression).
 * `validations` are the resource's own rules on the whole selector (e.g. that it selects something).
 */
export function labelSelectorSchema(description?: string, validations: readonly Record<string, unknown>[] = []): Record<string, unknown> {
  return {
    type: 'object',
    ...(description === undefined ? {} : { description }),
    properties: {
      matchLabels: { type: 'object', maxProperties: 32, additionalProperties: { type: 'string', maxLength: 63 } },
      matchExpressions: {
        type: 'array',
        maxItems: 32,
        items: {
          type: 'object',
          required: ['key', 'operator'],
          properties: {
            key: { type: 'string', maxLength: 316 },
            operator: { type: 'string', enum: ['In', 'NotIn', 'Exists', 'DoesNotExist'] },
            values: { type: 'array', maxItems: 64, items: { type: 'string', maxLength: 63 } },
          },
          'x-kubernetes-validations': [
            { rule: "(self.operator == 'In' || self.operator == 'NotIn') == (has(self.values) && size(self.values) > 0)", message: 'In and NotIn need values; Exists and DoesNotExist take none' },
          ],
        },
      },
    },
    ...(validations.length > 0 ? { 'x-kubernetes-validations': validations.map((v) => ({ ...v })) } : {}),
  };
}
