import assert from 'node:assert/strict';
import type { V1Pod, V1PodCondition } from '@kubernetes/client-node';
import type { KubeClient, KubeObject } from '@podlife/core';
import { signalScriptArgv, type ExecResult, type PodApi, type PodExecApi } from '@podlife/keystone';
import { KeystoneReconciler, type KeystoneReconcilerOptions } from '../src/keystone/reconciler.js';

const T0 = Date.parse('2025-01-01T00:00:00Z');

/** pod('ns','p').container('app').sidecar('proxy').finished('app', 0) */
function pod(namespace = 'jobs', name = 'p') {
  const p: V1Pod = {
    metadata: { namespace, name, uid: `uid-${name}`, resourceVersion: '10', annotations: {} },
    spec: { restartPolicy: 'Never', terminationGracePeriodSeconds: 30, containers: [] },
    status: { phase: 'Running', conditions: [], containerStatuses: [] },
  };
  const b = {
    container(c: string, role?: 'keystone' | 'sidecar') {
      p.spec!.containers.push({ name: c });
      p.status!.containerStatuses!.push({ name: c, ready: true, restartCount: 0, image: '', imageID: '', state: { running: { startedAt: new Date(T0) } } });
      if (role) p.metadata!.annotations![`role.podlife.dev/${c}`] = role;
      return b;
    },
    sidecar: (c: string) => b.container(c, 'sidecar'),
    keystone: (c: string) => b.container(c, 'keystone'),
    annotate(k: string, v: string) {
      p.metadata!.annotations![k] = v;
      return b;
    },
    finished(c: string, exitCode: number, atMs = T0 + 1000) {
      const s = p.status!.containerStatuses!.find((x) => x.name === c)!;
      s.state = { terminated: { exitCode, finishedAt: new Date(atMs).toISOString() as unknown as Date } };
      return b;
    },
    condition(c: V1PodCondition) {
      p.status!.conditions!.push(c);
      return b;
    },
    build: () => p,
  };
  return b;
}

interface Harness {
  reconciler: KeystoneReconciler;
  pods: Map<string, V1Pod>;
  patches: { path: string; body: unknown }[];
  execs: { container: string; command: readonly string[] }[];
  deletes: { name: string; grace: number }[];
  statusPatches: unknown[];
  events: { reason: string; type: string }[];
  abort: AbortController;
}

function harness(opts: Partial<KeystoneReconcilerOptions> = {}, execResult: ExecResult = { exitCode: 0, stdout: '', stderr: '' }): Harness {
  const pods = new Map<string, V1Pod>();
  const h: Omit<Harness, 'reconciler'> = { pods, patches: [], execs: [], deletes: [], statusPatches: [], events: [], abort: new AbortController() };
  let rv = 100;
  const client = {
    async patch<T>(path: string, body: { status: { conditions: V1PodCondition[] } }): Promise<T> {
      h.patches.push({ path, body });
      const [, , , , namespace, , name] = path.split('/');
      const current = structuredClone(pods.get(`${namespace}/${name}`)!);
      const conditions = current.status!.conditions ?? [];
      for (const c of body.status.conditions) {
        const i = conditions.findIndex((x) => x.type === c.type);
        if (i >= 0) conditions[i] = c;
        else conditions.push(c);
      }
      current.status!.conditions = conditions;
      current.metadata!.resourceVersion = String(++rv);
      return current as T;
    },
  } as unknown as KubeClient;
  const podApi: PodApi = {
    async addEphemeralContainer() {},
    async deletePod(ref, grace) {
      h.deletes.push({ name: ref.name, grace });
      return 'deleted';
    },
    async patchStatus(_ref, ops) {
      h.statusPatches.push(ops);
    },
  };
  const exec: PodExecApi = {
    async exec(_ref, container, command) {
      h.execs.push({ container, command });
      return execResult;
    },
  };
  const reconciler = new KeystoneReconciler({
    client,
    getPod: (key) => pods.get(key),
    pods: podApi,
    exec,
    events: { event: async (_o: KubeObject, type, reason) => void h.events.push({ type, reason }) },
    now: () => T0 + 2000,
    minStageMs: 20,
    ...opts,
  });
  return { ...h, reconciler };
}

function add(h: Harness, p: V1Pod): string {
  const key = `${p.metadata!.namespace}/${p.metadata!.name}`;
  h.pods.set(key, p);
  return key;
}

describe('keystone reconciler', () => {
  afterEach(() => undefined);

  it('never touches a pod without podlife annotations', async () => {
    const h = harness();
    const p = pod().container('app').container('proxy').finished('app', 0).build();
    await h.reconciler.reconcile(add(h, p), h.abort.signal);
    assert.deepEqual([h.patches.length, h.execs.length, h.events.length], [0, 0, 0]);
  });

  it('never acts in a namespace outside its scope', async () => {
    const h = harness({ config: { namespaces: ['batch'] } });
    const p = pod('jobs').container('app').sidecar('proxy').finished('app', 0).build();
    await h.reconciler.reconcile(add(h, p), h.abort.signal);
    assert.deepEqual([h.patches.length, h.execs.length], [0, 0]);
  });

  it('rule S: stops the sidecar by exec once every main container has finished, and records it', async () => {
    const h = harness();
    const key = add(h, pod().container('app').sidecar('proxy').finished('app', 0).build());
    await h.reconciler.reconcile(key, h.abort.signal);
    // The stop sequence runs in the background; it waits for the container to stop.
    await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(h.execs[0], { container: 'proxy', command: signalScriptArgv('TERM') });
    const written = h.pods.get(key)!;
    assert.ok(written);
    const last = h.patches.at(-1)!.body as { status: { conditions: V1PodCondition[] } };
    assert.match(last.status.conditions[0]!.message!, /issued: proxy/);
    h.abort.abort();
    await h.reconciler.drain();
  });

  it('a restarted controller does not repeat a stop its progress record already lists', async () => {
    const h = harness();
    const p = pod()
      .container('app')
      .sidecar('proxy')
      .finished('app', 0)
      .condition({ type: 'podlife.dev/SidecarsStopped', status: 'False', reason: 'Stopping', message: 'stopping proxy; issued: proxy', lastTransitionTime: new Date(T0 + 1100) })
      .build();
    const key = add(h, p);
    await h.reconciler.reconcile(key, h.abort.signal);
    await new Promise((r) => setTimeout(r, 10));
    assert.equal(h.execs.length, 0);
    h.abort.abort();
    await h.reconciler.drain();
  });

  it('records SidecarsStopped=True on its last pass even when the pod already turned terminal', async () => {
    // The kubelet's write showing the sidecar stopped can carry the terminal phase as well.
    const h = harness();
    const p = pod()
      .keystone('app')
      .sidecar('proxy')
      .finished('app', 0)
      .finished('proxy', 143, T0 + 1500)
      .condition({ type: 'podlife.dev/KeystoneFinished', status: 'True', reason: 'KeystoneTerminated', message: 'keystone container app terminated', lastTransitionTime: new Date(T0 + 1100) })
      .condition({ type: 'podlife.dev/SidecarsStopped', status: 'False', reason: 'Stopping', message: 'stopping proxy; issued: proxy', lastTransitionTime: new Date(T0 + 1100) })
      .build();
    p.status!.phase = 'Failed';
    await h.reconciler.reconcile(add(h, p), h.abort.signal);
    const written = (h.patches[0]?.body as { status: { conditions: V1PodCondition[] } } | undefined)?.status.conditions;
    assert.deepEqual(written?.map((c) => `${c.type}=${c.status}: ${c.message}`), ['podlife.dev/SidecarsStopped=True: stopped: proxy=143']);
    assert.deepEqual(h.events.map((e) => e.reason), ['SidecarExitedNonZero']);
    assert.equal(h.execs.length, 0);
  });

  it('rule K with TerminatePod deletes the pod with its own grace period', async () => {
    const h = harness();
    const p = pod().keystone('app').sidecar('proxy').annotate('podlife.dev/on-keystone-exit', 'TerminatePod').finished('app', 0).build();
    p.spec!.terminationGracePeriodSeconds = 7;
    await h.reconciler.reconcile(add(h, p), h.abort.signal);
    assert.deepEqual(h.deletes, [{ name: 'p', grace: 7 }]);
    assert.ok(h.events.some((e) => e.reason === 'KeystoneFinished'));
  });

  it('completion: phase marks the pod Succeeded from the main containers', async () => {
    const h = harness();
    const p = pod().container('app').sidecar('proxy').annotate('podlife.dev/completion', 'phase').finished('app', 0).build();
    await h.reconciler.reconcile(add(h, p), h.abort.signal);
    assert.deepEqual(h.statusPatches, [[{ op: 'test', path: '/status/phase', value: 'Running' }, { op: 'replace', path: '/status/phase', value: 'Succeeded' }]]);
  });

  it('an invalid pod gets LifecycleValid=False and one Warning, and a second pass repeats nothing', async () => {
    const h = harness();
    const key = add(h, pod().container('app').annotate('role.podlife.dev/ghost', 'sidecar').build());
    await h.reconciler.reconcile(key, h.abort.signal);
    await h.reconciler.reconcile(key, h.abort.signal);
    assert.equal(h.patches.length, 1);
    assert.deepEqual(h.events, [{ type: 'Warning', reason: 'InvalidLifecycleAnnotations' }]);
  });

  it('dry run decides but writes and stops nothing', async () => {
    const h = harness({ dryRun: true });
    const key = add(h, pod().container('app').sidecar('proxy').finished('app', 0).build());
    await h.reconciler.reconcile(key, h.abort.signal);
    await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual([h.patches.length, h.execs.length, h.events.length], [0, 0, 0]);
  });

  it('waits while a main container still runs', async () => {
    const h = harness();
    const key = add(h, pod().container('app').container('worker').sidecar('proxy').finished('app', 0).build());
    await h.reconciler.reconcile(key, h.abort.signal);
    await new Promise((r) => setTimeout(r, 10));
    assert.equal(h.execs.length, 0);
  });
});
