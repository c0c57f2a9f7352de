/**
 * fast-check arbitraries for whole pods as the API server stores them: every field the keystone
 * rules read (roles, stop specs, shared or host PID namespace, native sidecars, ephemeral stop
 * containers, progress conditions, container states) plus fields nobody reads (images, env,
 * host network and IPC, priority).
 */
import type { V1Container, V1ContainerStatus, V1Pod, V1PodCondition } from '@kubernetes/client-node';
import fc from 'fast-check';

export const T0 = Date.parse('2024-05-01T10:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString() as unknown as Date;
const NAMES = ['app', 'proxy', 'db', 'log', 'agent'] as const;

const stateArb = fc.oneof(
  fc.constant({ running: { startedAt: iso(T0 - 60_000) } }),
  fc.constant({ waiting: { reason: 'CrashLoopBackOff' } }),
  fc.record({ terminated: fc.record({ exitCode: fc.constantFrom(0, 1, 137, 143), finishedAt: fc.integer({ min: 0, max: 60_000 }).map((d) => iso(T0 + d)) }) }),
);

const statusArb = (name: string): fc.Arbitrary<V1ContainerStatus> =>
  fc.record({
    state: stateArb,
    lastState: fc.option(fc.record({ terminated: fc.record({ exitCode: fc.constantFrom(0, 143), finishedAt: fc.constant(iso(T0 - 1000)) }) }), { nil: undefined }),
  }).map(({ state, lastState }) => ({ name, image: 'img:1', imageID: 'sha', ready: 'running' in state, restartCount: lastState ? 1 : 0, state, ...(lastState ? { lastState } : {}) }));

const roleArb = fc.constantFrom(undefined, 'keystone', 'sidecar', 'alias-sidecar', 'bogus');
const stopArb = fc.constantFrom(undefined, 'signal:TERM', 'signal:KILL', 'preset:istio', 'http:8080/quit', 'exec:drain', 'signal:NOPE');
const conditionArb: fc.Arbitrary<V1PodCondition> = fc.oneof(
  fc.record({ type: fc.constant('podlife.dev/SidecarsStopped'), status: fc.constantFrom('True', 'False'), reason: fc.constant('Stopping'), message: fc.constantFrom('stopping app, proxy; issued: proxy', 'stopping proxy; issued: proxy:KILL', 'issued: ', 'stopped: proxy=0') }),
  fc.record({ type: fc.constant('podlife.dev/KeystoneFinished'), status: fc.constant('True'), reason: fc.constant('KeystoneTerminated'), message: fc.constant('done') }),
  fc.record({ type: fc.constant('podlife.dev/LifecycleValid'), status: fc.constantFrom('True', 'False'), reason: fc.constant('x'), message: fc.constant('x') }),
  fc.record({ type: fc.constant('Ready'), status: fc.constantFrom('True', 'False') }),
).map((c) => ({ ...c, lastTransitionTime: iso(T0) }));

export const podArb: fc.Arbitrary<V1Pod> = fc
  .record({
    names: fc.uniqueArray(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 5 }),
    roles: fc.array(roleArb, { minLength: 5, maxLength: 5 }),
    stops: fc.array(stopArb, { minLength: 5, maxLength: 5 }),
    users: fc.array(fc.constantFrom(undefined, 0, 1000, 65532), { minLength: 5, maxLength: 5 }),
    native: fc.option(fc.record({ name: fc.constantFrom('mesh', 'proxy'), annotate: fc.boolean() }), { nil: undefined }),
    ephemeral: fc.option(fc.constantFrom(...NAMES), { nil: undefined }),
    share: fc.constantFrom(undefined, true, false),
    hostPID: fc.constantFrom(undefined, undefined, false, true),
    unread: fc.record({ hostNetwork: fc.boolean(), hostIPC: fc.boolean(), priority: fc.integer({ min: 0, max: 1000 }), serviceAccountName: fc.constantFrom('default', 'runner') }, { requiredKeys: [] }),
    restartPolicy: fc.constantFrom(undefined, 'Never', 'OnFailure', 'Always'),
    grace: fc.option(fc.integer({ min: 0, max: 120 }), { nil: undefined }),
    deleting: fc.boolean(),
    phase: fc.constantFrom('Running', 'Pending', 'Succeeded', 'Failed'),
    podUser: fc.constantFrom(undefined, 1000),
    extra: fc.constantFrom(undefined, ['podlife.dev/on-keystone-exit', 'TerminatePod'], ['podlife.dev/completion', 'phase'], ['role.podlife.dev/ghost', 'sidecar'], ['podlife.dev/native-sidecars', 'false']),
    conditions: fc.array(conditionArb, { maxLength: 3 }),
    seed: fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }),
  })
  .chain((s) =>
    fc.tuple(fc.constant(s), fc.tuple(...s.names.map((n) => statusArb(n)))),
  )
  .map(([s, statuses]) => {
    const annotations: Record<string, string> = { 'example.com/owner': 'team-a' };
    const containers: V1Container[] = s.names.map((name, i) => {
      const role = s.roles[i];
      if (role === 'alias-sidecar') annotations[`sidecars.alpha.kubernetes.io/${name}`] = 'sidecar';
      else if (role !== undefined) annotations[`role.podlife.dev/${name}`] = role;
      const stop = s.stops[i];
      if (stop !== undefined) annotations[`stop.podlife.dev/${name}`] = stop;
      const user = s.users[i];
      return {
        name,
        image: `${name}:1`,
        env: [{ name: 'A', value: 'b' }],
        resources: { requests: { cpu: '10m' } },
        ...(user !== undefined ? { securityContext: { runAsUser: user, readOnlyRootFilesystem: true } } : {}),
      };
    });
    if (s.extra) annotations[s.extra[0]] = s.extra[1];
    const initContainers: V1Container[] = [{ name: 'init', image: 'init:1' }];
    if (s.native && !s.names.includes(s.native.name as (typeof NAMES)[number])) {
      initContainers.push({ name: s.native.name, image: 'mesh:1', restartPolicy: 'Always' });
      if (s.native.annotate) annotations[`role.podlife.dev/${s.native.name}`] = 'sidecar';
    }
    const pod: V1Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'p',
        namespace: 'default',
        uid: 'u',
        resourceVersion: '1',
        labels: { 'podlife.dev/managed': 'true' },
        annotations,
        managedFields: [{ manager: 'kubectl', operation: 'Update' }],
        ...(s.deleting ? { deletionTimestamp: iso(T0) } : {}),
      },
      spec: {
        containers,
        initContainers,
        ...(s.ephemeral ? { ephemeralContainers: [{ name: `podlife-stop-${s.ephemeral}`, image: 'busybox:1', targetContainerName: s.ephemeral }] } : {}),
        ...(s.share !== undefined ? { shareProcessNamespace: s.share } : {}),
        ...(s.hostPID !== undefined ? { hostPID: s.hostPID } : {}),
        ...s.unread,
        ...(s.restartPolicy ? { restartPolicy: s.restartPolicy } : {}),
        ...(s.grace !== undefined ? { terminationGracePeriodSeconds: s.grace } : {}),
        ...(s.podUser !== undefined ? { securityContext: { runAsUser: s.podUser } } : {}),
        nodeName: 'node-1',
      },
      status: { phase: s.phase, podIP: '10.0.0.1', conditions: s.conditions, containerStatuses: statuses },
    };
    return pod;
  });

/** A time within the interesting range of the pods above. */
export const nowArb = fc.integer({ min: 0, max: 300_000 }).map((d) => T0 + d);
