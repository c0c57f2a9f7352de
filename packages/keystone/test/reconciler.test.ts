import assert from 'node:assert/strict';
import type { V1Pod, V1PodCondition } from '@kubernetes/client-node';
import type { KubeClient, KubeObject } from '@podlife/core';
import { ApiError } from '@podlife/core';
import { type ExecResult, type PodApi, type PodExecApi } from '../src/index.js';
import { signalScriptArgv } from '../src/strategies/commands.js';
import { KeystoneReconciler, type KeystoneReconcilerOptions } from '../src/reconciler.js';
import { withConditionsPatch } from './fixtures.js';

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
  statusPatches: { op: string; path: string; value?: unknown }[][];
  events: { reason: string; type: string }[];
  abort: AbortController;
  clock: { now: number };
}

function harness(opts: Partial<KeystoneReconcilerOptions> = {}, execResult: ExecResult = { exitCode: 0, stdout: '', stderr: '' }): Harness {
  const pods = new Map<string, V1Pod>();
  const h: Omit<Harness, 'reconciler'> = { pods, patches: [], execs: [], deletes: [], statusPatches: [], events: [], abort: new AbortController(), clock: { now: T0 + 2000 } };
  const client = {
    async patch<T>(path: string, body: { status: { conditions: V1PodCondition[] } }): Promise<T> {
      h.patches.push({ path, body });
      const [, , , , namespace, , name] = path.split('/');
      const current = withConditionsPatch(pods.get(`${namespace}/${name}`)!, body.status.conditions);
      current.metadata!.resourceVersion = String(Number(current.metadata!.resourceVersion) + 1);
      return current as T;
    },
  } as unknown as KubeClient;
  const podApi: PodApi = {
    async addEphemeralContainer() {},
    async deletePod(ref, grace) {
      h.deletes.push({ name: ref.name, grace });
      return 'deleted';
    },
    async patchStatus(ref, ops) {
      h.statusPatches.push(ops.map((o) => ({ ...o })));
      const current = structuredClone(pods.get(`${ref.namespace}/${ref.name}`)!);
      for (const op of ops) if (op.op === 'replace' || op.op === 'add') current.status!.phase = op.value as string;
      current.metadata!.resourceVersion = String(Number(current.metadata!.resourceVersion) + 1);
      return current;
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
    getPod: (key: string) => pods.get(key),
    pods: podApi,
    exec,
    events: { event: async (_o: KubeObject, type: 'Normal' | 'Warning', reason: string) => void h.events.push({ type, reason }) },
    now: () => h.clock.now,
    ...opts,
    config: { minStageMs: 2000, ...opts.config },
  });
  return { ...h, reconciler };
}

function add(h: Harness, p: V1Pod): string {
  const key = `${p.metadata!.namespace}/${p.metadata!.name}`;
  h.pods.set(key, p);
  return key;
}

type Patch = { status: { conditions: V1PodCondition[] } };
const lastRecord = (h: Harness) => (h.patches.at(-1)?.body as Patch | undefined)?.status.conditions.find((c) => c.type === 'podlife.dev/SidecarsStopped');

describe('keystone reconciler', () => {
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

  it('rule S: stops the sidecar by exec, records it with its time, and asks to be called back at the end of its share', async () => {
    const h = harness();
    const key = add(h, pod().container('app').sidecar('proxy').finished('app', 0).build());
    const result = await h.reconciler.reconcile(key, h.abort.signal);
    assert.deepEqual(h.execs, [{ container: 'proxy', command: signalScriptArgv('TERM') }]);
    assert.match(lastRecord(h)?.message ?? '', new RegExp(`issued: proxy@${T0 + 2000}$`));
    // Fired at T0+1000 with 30 s: the only stage's share ends at T0+31000.
    assert.deepEqual(result, { requeueAfterMs: 29_000 });
  });

  it('a late stop that is slow to reach its container still gets its whole minimum share, counted from its delivery', async () => {
    // Fired at T0+1000 with 30 s; the controller arrives at T0+40000 with nothing left of the
    // budget, so the stage gets the 2 s minimum. The exec takes 1.3 s to reach the container.
    const slowExec: PodExecApi = {
      async exec(_ref, container, command) {
        h.execs.push({ container, command });
        h.clock.now += 1300;
        return { exitCode: 0, stdout: '', stderr: '' };
      },
    };
    const h = harness({ exec: slowExec });
    h.clock.now = T0 + 40_000;
    const key = add(h, pod().container('app').sidecar('proxy').finished('app', 0).build());
    const first = await h.reconciler.reconcile(key, h.abort.signal);
    const record = lastRecord(h);
    assert.match(record?.message ?? '', new RegExp(`issued: proxy@${T0 + 41_300}$`), 'the stop is dated when the exec returned');
    assert.deepEqual(first, { requeueAfterMs: 2000 }, 'called back 2 s after the delivery');
    h.pods.get(key)!.status!.conditions!.push(record!);

    h.clock.now = T0 + 43_000; // 3 s after the decision, 1.7 s after the delivery: not yet
    await h.reconciler.reconcile(key, h.abort.signal);
    assert.deepEqual([h.statusPatches.length, h.deletes.length, h.execs.length], [0, 0, 1]);

    h.clock.now = T0 + 43_400;
    await h.reconciler.reconcile(key, h.abort.signal);
    assert.equal(h.deletes.length, 1, 'escalated once the 2 s from the delivery are over');
  });

  it('a second pass before the container stops repeats nothing', async () => {
    const h = harness();
    const key = add(h, pod().container('app').sidecar('proxy').finished('app', 0).build());
    await h.reconciler.reconcile(key, h.abort.signal);
    const patches = h.patches.length;
    await h.reconciler.reconcile(key, h.abort.signal);
    assert.equal(h.execs.length, 1);
    assert.equal(h.patches.length, patches);
  });

  it('a restarted controller does not repeat a stop its progress record already lists', async () => {
    const h = harness();
    const p = pod()
      .container('app')
      .sidecar('proxy')
      .finished('app', 0)
      .condition({ type: 'podlife.dev/SidecarsStopped', status: 'False', reason: 'Stopping', message: `stopping proxy; issued: proxy@${T0 + 1100}`, lastTransitionTime: new Date(T0 + 1100) })
      .build();
    await h.reconciler.reconcile(add(h, p), h.abort.signal);
    assert.equal(h.execs.length, 0);
  });

  it('a record it could not write is kept: the retry does not repeat the stop', async () => {
    const h = harness();
    const key = add(h, pod().container('app').sidecar('proxy').finished('app', 0).build());
    const client = (h.reconciler as unknown as { opts: { client: { patch: unknown } } }).opts.client;
    const patch = client.patch;
    client.patch = async () => {
      throw new ApiError(503, 'ServiceUnavailable', 'the server is unavailable', {});
    };
    await assert.rejects(h.reconciler.reconcile(key, h.abort.signal), /unavailable/);
    client.patch = patch;
    await h.reconciler.reconcile(key, h.abort.signal);
    assert.equal(h.execs.length, 1, 'one stop');
    assert.match(lastRecord(h)?.message ?? '', /issued: proxy@/);
  });

  it('announces a container seen stopped once, before the next stage is stopped', async () => {
    const h = harness();
    const key = add(h, pod().keystone('app').container('worker').sidecar('proxy').finished('app', 0).build());
    await h.reconciler.reconcile(key, h.abort.signal);
    assert.deepEqual(h.execs.map((e) => e.container), ['worker']);
    const p = structuredClone(h.pods.get(key)!);
    p.status!.conditions = (h.patches.at(-1)!.body as Patch).status.conditions;
    p.status!.containerStatuses!.find((c) => c.name === 'worker')!.state = { terminated: { exitCode: 143, finishedAt: new Date(T0 + 2500) } };
    p.metadata!.resourceVersion = '500';
    h.pods.set(key, p);
    h.clock.now = T0 + 2600;
    await h.reconciler.reconcile(key, h.abort.signal);
    await h.reconciler.reconcile(key, h.abort.signal);
    assert.deepEqual(h.execs.map((e) => e.container), ['worker', 'proxy']);
    assert.deepEqual(h.events.map((e) => e.reason), ['KeystoneFinished', 'StoppingContainer', 'ContainerStopped', 'StoppingContainer']);
  });

  describe('a controller that arrives late (the soak findings)', () => {
    // Rule K fired at T0 with a 30 s budget; the controller was away until T0+26s.
    const late = () => pod().keystone('app').container('worker').sidecar('proxy').finished('app', 0, T0);

    it('stops the mains first with what is left of the budget, reports nothing failed, and says it was late', async () => {
      const h = harness();
      h.clock.now = T0 + 26_000;
      const key = add(h, late().build());
      const result = await h.reconciler.reconcile(key, h.abort.signal);
      assert.deepEqual(h.execs.map((e) => e.container), ['worker'], 'mains before sidecars');
      assert.deepEqual([h.deletes.length, h.statusPatches.length], [0, 0], 'no escalation before the stop spec had its share');
      assert.equal(lastRecord(h)?.reason, 'Stopping');
      assert.ok(!h.events.some((e) => e.reason === 'StopFailed'));
      assert.deepEqual(h.events.filter((e) => e.reason === 'StoppingContainer').length, 1);
      // 4 s left for two stages: 2 s each, which is also the minimum.
      assert.deepEqual(result, { requeueAfterMs: 2000 });
    });

    it('past the whole budget, the stop spec still goes first and gets its minimum share before the kubelet ends the pod', async () => {
      const h = harness();
      h.clock.now = T0 + 40_000;
      const key = add(h, late().build());
      assert.deepEqual(await h.reconciler.reconcile(key, h.abort.signal), { requeueAfterMs: 2000 });
      assert.deepEqual(h.execs.map((e) => e.container), ['worker']);
      assert.equal(h.statusPatches.length, 0, 'no escalation in the same pass as the stop');
      // Fed back the record it wrote; 1.9 s later nothing is due, 2 s later the escalation is.
      const p = structuredClone(h.pods.get(key)!);
      p.status!.conditions = (h.patches.at(-1)!.body as Patch).status.conditions;
      p.metadata!.resourceVersion = '500';
      h.pods.set(key, p);
      h.clock.now = T0 + 41_900;
      await h.reconciler.reconcile(key, h.abort.signal);
      assert.equal(h.statusPatches.length, 0);
      h.clock.now = T0 + 42_000;
      await h.reconciler.reconcile(key, h.abort.signal);
      assert.deepEqual(h.statusPatches.at(-1)?.at(-1), { op: 'replace', path: '/status/phase', value: 'Succeeded' });
      assert.deepEqual(h.deletes, [{ name: 'p', grace: 1 }]);
      assert.equal(h.execs.length, 1, 'never a second stop, never a SIGKILL from inside');
    });
  });

  it('escalates again when the phase it recorded was written over (the kubelet reports its own view first)', async () => {
    const h = harness();
    const p = pod()
      .container('app')
      .sidecar('proxy')
      .finished('app', 0, T0)
      .condition({ type: 'podlife.dev/SidecarsStopped', status: 'False', reason: 'Stopping', message: `stopping proxy; issued: proxy@${T0 + 100}, proxy:KILL@${T0 + 15_000}`, lastTransitionTime: new Date(T0 + 100) })
      .build();
    p.metadata!.finalizers = ['batch.kubernetes.io/job-tracking'];
    h.clock.now = T0 + 15_500;
    const result = await h.reconciler.reconcile(add(h, p), h.abort.signal);
    assert.deepEqual(h.statusPatches.at(-1)?.at(-1), { op: 'replace', path: '/status/phase', value: 'Succeeded' });
    assert.equal(h.deletes.length, 0, 'the Job has yet to count it');
    assert.equal(h.execs.length, 0);
    assert.deepEqual(result, { requeueAfterMs: 2000 });
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
    const written = (h.patches[0]?.body as Patch | undefined)?.status.conditions;
    assert.deepEqual(written?.map((c) => `${c.type}=${c.status}: ${c.message}`), ['podlife.dev/SidecarsStopped=True: stopped: proxy=143']);
    assert.deepEqual(h.events.map((e) => e.reason), ['ContainerStopped', 'SidecarExitedNonZero']);
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
    assert.deepEqual(h.statusPatches, [
      [
        { op: 'test', path: '/metadata/uid', value: 'uid-p' },
        { op: 'test', path: '/status/phase', value: 'Running' },
        { op: 'replace', path: '/status/phase', value: 'Succeeded' },
      ],
    ]);
  });

  describe('completion: phase without false alarms (the soak found 422 noise)', () => {
    const byPhase = () => pod().container('app').sidecar('proxy').annotate('podlife.dev/completion', 'phase').finished('app', 0).build();

    it('a second pass on a cache that has not caught up uses the pod its phase patch returned: no second patch', async () => {
      const h = harness();
      const p = byPhase();
      p.metadata!.finalizers = ['batch.kubernetes.io/job-tracking'];
      const key = add(h, p);
      await h.reconciler.reconcile(key, h.abort.signal);
      await h.reconciler.reconcile(key, h.abort.signal);
      assert.equal(h.statusPatches.length, 1);
      assert.ok(!h.events.some((e) => e.type === 'Warning'));
    });

    it('a phase patch whose test finds the phase changed is no failure: no Warning, evaluated again soon', async () => {
      const h = harness();
      const key = add(h, byPhase());
      const podApi = (h.reconciler as unknown as { pods: PodApi }).pods;
      podApi.patchStatus = async () => {
        throw new ApiError(422, 'Invalid', 'the server rejected our request due to an error in our request', {});
      };
      const result = await h.reconciler.reconcile(key, h.abort.signal);
      assert.deepEqual(result, { requeueAfterMs: 500 });
      assert.deepEqual(h.events.filter((e) => e.type === 'Warning'), []);
      assert.equal(h.deletes.length, 0);
    });
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
    assert.deepEqual([h.patches.length, h.execs.length, h.events.length], [0, 0, 0]);
  });

  it("writes its record only to the pod it decided on: a pod recreated under the same name does not get the old one's record", async () => {
    // The API server refuses a patch whose metadata.uid is not the pod's (a uid never changes).
    const server = new Map<string, V1Pod>();
    const bodies: { metadata?: { uid?: string }; status: { conditions: V1PodCondition[] } }[] = [];
    const client = {
      async patch<T>(path: string, body: (typeof bodies)[number]): Promise<T> {
        bodies.push(body);
        const [, , , , namespace, , name] = path.split('/');
        const current = structuredClone(server.get(`${namespace}/${name}`)!);
        if (body.metadata?.uid !== undefined && body.metadata.uid !== current.metadata?.uid) {
          throw new ApiError(422, 'Invalid', `Pod "${name}" is invalid: metadata.uid: Invalid value: "${body.metadata.uid}": field is immutable`, {});
        }
        current.status!.conditions = [...(current.status!.conditions ?? []), ...body.status.conditions];
        server.set(`${namespace}/${name}`, current);
        return current as T;
      },
    } as unknown as KubeClient;
    const h = harness({ client });
    const stale = pod().container('app').sidecar('proxy').finished('app', 0).build();
    const key = add(h, stale);
    const recreated = pod().container('app').sidecar('proxy').finished('app', 0).build();
    recreated.metadata!.uid = 'uid-of-the-new-pod';
    server.set(key, recreated);
    await assert.rejects(h.reconciler.reconcile(key, h.abort.signal), /field is immutable/);
    assert.equal(bodies[0]?.metadata?.uid, 'uid-p', 'the patch names the pod it was decided on');
    assert.deepEqual(server.get(key)?.status?.conditions, [], 'the new pod is not told that its stop went out');
  });

  it('waits while a main container still runs', async () => {
    const h = harness();
    const key = add(h, pod().container('app').container('worker').sidecar('proxy').finished('app', 0).build());
    assert.equal(await h.reconciler.reconcile(key, h.abort.signal), undefined);
    assert.equal(h.execs.length, 0);
  });
});
