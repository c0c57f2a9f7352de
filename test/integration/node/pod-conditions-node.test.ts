/**
 * @podlife/pod-conditions and `podlife explain` on a real node: the kubelet of the release under
 * test (PODLIFE_K8S_VERSION; 1.34 to 1.37), containerd, runc
 * and the CNI bridge (test/support/node.ts). Every container status, pod condition and Event read
 * here was written by the real kubelet; the unit tests replay copies of them
 * (packages/pod-conditions/test/kubelet-observed.ts).
 *
 * What stays on the simulated kubelet (pod-conditions.test.ts), and why:
 * - nothing that depends on what a kubelet writes: the node here is one kubelet version, which
 *   always writes `PodReadyToStartContainers`, so `PodHasNetwork` (1.25-1.27) and clusters
 *   without the condition (the inference in sandbox.ts) can only be checked against statuses we
 *   write ourselves (unit tests) — version skew is the simulation's job;
 * - the API-level tests that need no kubelet behaviour at all (a wait rejected by a deletion, an
 *   API server restart, a pod that does not exist) stay where they are.
 *
 * Where the kubelet's releases differ, each release's behaviour is asserted: from 1.37 (KEP-3085
 * GA) the kubelet reports `PodReadyToStartContainers=True` as soon as the sandbox is up, before it
 * pulls images, in a status that has no pod IP yet; before, the condition turns True with the IP.
 *
 * @releases every — what each kubelet writes: PodReadyToStartContainers before the pod IP from
 *   1.37 only; explain reads each.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it, before, after } from 'mocha';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { Manager, resourcePath, sleep, stripManagedFields, timeMs, type KubeClient } from '@podlife/core';
import {
  NetworkConditionType,
  ReadinessGate,
  explainPod,
  networkConditionsController,
  podCondition,
  sandboxReady,
  waitForPodCondition,
  type Diagnosis,
  type PodEvent,
  type PodExplanation,
} from '@podlife/pod-conditions';
import { containerLog, type ControlPlane, createNamespace, kubernetesMinor, podlife, type RealNode, recordPod, sharedRealCluster } from '@podlife/testbed';


/** Runs the `podlife` CLI from source, as a user would. */

const podPath = (namespace: string, name?: string): string => resourcePath({ version: 'v1', resource: 'pods', namespace, name });

/** Polls the pod until `ok` holds; fails with the last status seen. */
async function waitForPod(client: KubeClient, ns: string, name: string, what: string, ok: (pod: V1Pod) => boolean, timeoutMs = 90_000): Promise<V1Pod> {
  const deadline = Date.now() + timeoutMs;
  let pod: V1Pod | undefined;
  while (Date.now() < deadline) {
    pod = await client.get<V1Pod>(podPath(ns, name));
    if (ok(pod)) return pod;
    await sleep(250);
  }
  throw new Error(`pod ${ns}/${name}: no ${what} after ${timeoutMs / 1000} s; last status ${JSON.stringify(pod?.status)}`);
}

async function podEvents(client: KubeClient, ns: string, name: string): Promise<PodEvent[]> {
  const list = await client.get<{ items?: PodEvent[] }>(resourcePath({ version: 'v1', resource: 'events', namespace: ns }), {
    fieldSelector: `involvedObject.kind=Pod,involvedObject.name=${name}`,
  });
  return list.items ?? [];
}

async function waitForEvent(client: KubeClient, ns: string, name: string, ok: (e: PodEvent) => boolean, timeoutMs = 90_000): Promise<PodEvent> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const found = (await podEvents(client, ns, name)).find(ok);
    if (found) return found;
    await sleep(500);
  }
  throw new Error(`pod ${ns}/${name}: no matching Event after ${timeoutMs / 1000} s; Events: ${JSON.stringify(await podEvents(client, ns, name))}`);
}

describe('pod conditions on a real node (kubelet, containerd, runc, CNI)', function () {
  this.timeout(180_000);
  let cp: ControlPlane;
  let node: RealNode;
  let ns: string;

  /** A busybox container that the node has (never pulled). */
  const busybox = (name: string, command: string[], extra: Partial<V1Container> = {}): V1Container => ({
    name, image: node.images.busybox, imagePullPolicy: 'Never', command, ...extra,
  });

  async function createPod(name: string, spec: V1Pod['spec'], metadata: V1Pod['metadata'] = {}): Promise<void> {
    await cp.client.create(podPath(ns), { apiVersion: 'v1', kind: 'Pod', metadata: { ...metadata, name }, spec: { terminationGracePeriodSeconds: 1, ...spec } });
  }

  async function explainJson(name: string): Promise<PodExplanation> {
    const r = await podlife(cp.kubeconfigPath, ['explain', name, '-n', ns, '--output', 'json']);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout) as PodExplanation;
  }

  async function explainText(name: string): Promise<string> {
    const r = await podlife(cp.kubeconfigPath, ['explain', name, '-n', ns, '--width', '100', '--ascii']);
    assert.equal(r.code, 0, r.stderr);
    return r.stdout;
  }

  before(async function () {
    this.timeout(600_000);
    ({ cp, node } = await sharedRealCluster());
    ns = await createNamespace(cp.client, 'pcnode');
  });

  after(async () => {
    await cp?.client.delete(`/api/v1/namespaces/${ns}`).catch(() => undefined);
  });

  describe('the kubelet’s own PodReadyToStartContainers', () => {
    it('is False while the sandbox is created, True once it runs and False again once the pod completed', async () => {
      const seen: V1Pod[] = [];
      const rec = recordPod(cp.client, ns, 'sandbox', (p) => seen.push(p));
      try {
        await createPod('sandbox', { restartPolicy: 'Never', containers: [busybox('app', ['sh', '-c', 'sleep 3'])] });
        await waitForPod(cp.client, ns, 'sandbox', 'phase Succeeded', (p) => p.status?.phase === 'Succeeded');
        // The final status is written with the phase; give the watch a moment to deliver it.
        const deadline = Date.now() + 10_000;
        while (seen.at(-1)?.status?.phase !== 'Succeeded' && Date.now() < deadline) await sleep(100);
      } finally {
        rec.stop();
      }
      const withCondition = seen.filter((p) => podCondition(p, 'PodReadyToStartContainers'));
      const statuses = withCondition.map((p) => podCondition(p, 'PodReadyToStartContainers')?.status);
      // Collapse repeats: the sequence of values the kubelet went through.
      const transitions = statuses.filter((s, i) => i === 0 || s !== statuses[i - 1]);
      assert.deepEqual(transitions, ['False', 'True', 'False'], `PodReadyToStartContainers went ${statuses.join(' ')}`);

      const first = withCondition[0]!;
      assert.equal(first.status?.containerStatuses?.[0]?.state?.waiting?.reason, 'ContainerCreating');
      assert.equal(sandboxReady(first).source, 'condition');
      assert.equal(explainPod(first, [], Date.now()).cause, 'SandboxPending');

      const up = withCondition.find((p) => podCondition(p, 'PodReadyToStartContainers')?.status === 'True')!;
      const upAt = timeMs(podCondition(up, 'PodReadyToStartContainers')?.lastTransitionTime)!;
      const started = timeMs(up.status?.containerStatuses?.[0]?.state?.running?.startedAt ?? up.status?.containerStatuses?.[0]?.state?.terminated?.startedAt);
      if (kubernetesMinor(cp.version) >= 37) {
        // Written by the sandbox-ready callback from the status the kubelet had (no IP, container waiting).
        assert.equal(up.status?.containerStatuses?.[0]?.state?.waiting?.reason, 'ContainerCreating', `${cp.version}: True is reported before the container is created`);
        assert.equal(up.status?.podIP, undefined, `${cp.version}: the pod IP follows in a later status`);
        const running = seen.find((p) => p.status?.phase === 'Running' || p.status?.phase === 'Succeeded');
        assert.ok(running?.status?.podIP, `${cp.version}: the pod IP is there once the container ran`);
      } else {
        assert.ok(up.status?.podIP, `${cp.version}: a ready sandbox has the pod IP`);
      }
      assert.deepEqual([sandboxReady(up).status, sandboxReady(up).source], ['True', 'condition']);
      // Second resolution: the sandbox is up no later than the container started.
      assert.ok(started === undefined || upAt <= started + 1000, `sandbox ready at ${upAt}, container started at ${started}`);

      const done = withCondition.at(-1)!;
      assert.equal(done.status?.phase, 'Succeeded');
      const downAt = timeMs(podCondition(done, 'PodReadyToStartContainers')?.lastTransitionTime)!;
      const finished = timeMs(done.status?.containerStatuses?.[0]?.state?.terminated?.finishedAt)!;
      assert.ok(downAt >= finished, `the sandbox went down (${downAt}) after the container finished (${finished})`);
      assert.deepEqual([sandboxReady(done).status, sandboxReady(done).source], ['False', 'condition']);
      assert.equal((await explainJson('sandbox')).diagnosis.cause, 'Succeeded');
    });

    it('goes False and back to True, with a new pod IP, when the sandbox dies and the kubelet recreates it', async () => {
      const seen: V1Pod[] = [];
      const rec = recordPod(cp.client, ns, 'resandbox', (p) => seen.push(p));
      try {
        await createPod('resandbox', { containers: [busybox('app', ['sleep', '3600'])] });
        const before = await waitForPodCondition(cp.client, ns, 'resandbox', 'Ready', { timeoutMs: 90_000 });
        const firstUp = timeMs(podCondition(before, 'PodReadyToStartContainers')?.lastTransitionTime)!;
        const sandboxes = execFileSync('ctr', ['-a', node.containerdAddress, '-n', 'k8s.io', 'containers', 'list', '-q',
          `labels."io.kubernetes.pod.uid"==${before.metadata?.uid},labels."io.cri-containerd.kind"==sandbox`], { encoding: 'utf8' }).split('\n').filter(Boolean);
        assert.equal(sandboxes.length, 1, `sandboxes of the pod: ${sandboxes.join(' ')}`);
        await sleep(1100); // a transition in a later second than the first one
        execFileSync('ctr', ['-a', node.containerdAddress, '-n', 'k8s.io', 'tasks', 'kill', '-s', 'SIGKILL', sandboxes[0]!]);
        const after = await waitForPod(cp.client, ns, 'resandbox', 'a new sandbox with the container restarted', (p) =>
          p.status?.podIP !== before.status?.podIP && (p.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1 && podCondition(p, 'Ready')?.status === 'True');
        const again = podCondition(after, 'PodReadyToStartContainers');
        assert.equal(again?.status, 'True');
        assert.ok(timeMs(again?.lastTransitionTime)! > firstUp, `transition ${again?.lastTransitionTime} after the first at ${new Date(firstUp).toISOString()}`);
        assert.ok(inSubnet(after.status?.podIP ?? '', node.podSubnet));
      } finally {
        rec.stop();
      }
      const statuses = seen.map((p) => podCondition(p, 'PodReadyToStartContainers')?.status).filter(Boolean);
      const transitions = statuses.filter((s, i) => i === 0 || s !== statuses[i - 1]);
      assert.deepEqual(transitions, ['False', 'True', 'False', 'True'], `PodReadyToStartContainers went ${statuses.join(' ')}`);
    });

    it('is what explain’s timeline shows for the sandbox stage of a started pod', async () => {
      await createPod('timeline', { containers: [busybox('app', ['sleep', '3600'])] });
      const ready = await waitForPodCondition(cp.client, ns, 'timeline', 'Ready', { timeoutMs: 90_000 });
      const x = await explainJson('timeline');
      assert.equal(x.diagnosis.cause, 'Ready');
      assert.deepEqual([x.sandbox.status, x.sandbox.source], ['True', 'condition']);
      const stage = x.timeline.stages.find((s) => s.key === 'sandbox');
      assert.equal(stage?.state, 'reached');
      assert.equal(stage?.endMs, timeMs(podCondition(ready, 'PodReadyToStartContainers')?.lastTransitionTime));
      const at = (k: string): number => x.timeline.stages.find((s) => s.key === k)?.endMs ?? NaN;
      assert.ok(at('scheduled') <= at('sandbox') && at('sandbox') <= at('containersReady') && at('containersReady') <= at('ready'), JSON.stringify(x.timeline.stages));
      assert.match(await explainText('timeline'), /The pod is ready\.\n$/);
    });
  });

  describe('podlife explain on what the kubelet reports', () => {
    it('explains a real ErrImagePull, then ImagePullBackOff, naming the image and the runtime error', async () => {
      const image = 'registry.example/podlife/missing:1';
      await createPod('pull', { containers: [{ name: 'app', image, imagePullPolicy: 'IfNotPresent' }] });
      for (const reason of ['ErrImagePull', 'ImagePullBackOff']) {
        await waitForPod(cp.client, ns, 'pull', reason, (p) => p.status?.containerStatuses?.[0]?.state?.waiting?.reason === reason);
        const x = await explainJson('pull');
        assert.deepEqual([x.diagnosis.stage, x.diagnosis.cause, x.diagnosis.subject], ['containersReady', 'ImagePullBackOff', 'app']);
        // The pull failed on the node, against the loopback endpoint every pull resolves to.
        assert.match(x.diagnosis.sentence, new RegExp(`^Image "registry\\.example/podlife/missing:1" of container app cannot be pulled \\((ErrImagePull|ImagePullBackOff): .*127\\.0\\.0\\.1:9.*connection refused\\); check the image name`));
        assert.deepEqual([x.sandbox.status, x.sandbox.source], ['True', 'condition']);
      }
    });

    it('explains a real CrashLoopBackOff in every state the kubelet wrote (restartPolicy Always, exit 3)', async () => {
      const seen: V1Pod[] = [];
      const rec = recordPod(cp.client, ns, 'crashy', (p) => seen.push(p));
      let looping: V1Pod;
      try {
        await createPod('crashy', { restartPolicy: 'Always', containers: [busybox('crashy', ['sh', '-c', 'echo boom; exit 3'])] });
        // The case: restartCount 2 and `terminated`, between two restarts.
        looping = await waitForPod(cp.client, ns, 'crashy', 'restartCount 2 in state terminated', (p) => {
          const cs = p.status?.containerStatuses?.[0];
          return (cs?.restartCount ?? 0) >= 2 && cs?.state?.terminated !== undefined;
        }, 120_000);
        const x = await explainJson('crashy');
        assert.deepEqual([x.diagnosis.cause, x.diagnosis.subject, x.diagnosis.exitCode], ['CrashLoopBackOff', 'crashy', 3]);
        assert.ok((x.diagnosis.restarts ?? 0) >= 2, JSON.stringify(x.diagnosis));
        assert.match(x.diagnosis.sentence, /^Container crashy keeps crashing: it (last )?exited with code 3 \(Error\) after running \S+ and has restarted \d+ times; /);
        const text = await explainText('crashy');
        assert.match(text, /stuck at: containersReady \(CrashLoopBackOff\)\nContainer crashy keeps crashing: /);
        await waitForPod(cp.client, ns, 'crashy', 'CrashLoopBackOff at restartCount 2 or more', (p) => {
          const cs = p.status?.containerStatuses?.[0];
          return (cs?.restartCount ?? 0) >= 2 && cs?.state?.waiting?.reason === 'CrashLoopBackOff';
        }, 120_000);
      } finally {
        rec.stop();
      }
      assert.equal(await containerLog(cp.client, ns, 'crashy', 'crashy'), 'boom\n');

      const terminated = looping.status?.containerStatuses?.[0];
      assert.equal(terminated?.state?.terminated?.exitCode, 3);
      assert.equal(terminated?.lastState?.terminated?.exitCode, 3);
      // Every version the kubelet wrote once the container first exited says what the loop is.
      const states = new Set<string>();
      for (const p of seen) {
        const cs = p.status?.containerStatuses?.[0];
        if (!cs || cs.state?.waiting?.reason === 'ContainerCreating') continue;
        const state = cs.state?.terminated ? 'terminated' : cs.state?.waiting ? `waiting ${cs.state.waiting.reason}` : 'running';
        states.add(state);
        const d: Diagnosis = explainPod(p, [], Date.now());
        if (state === 'running') continue; // a few milliseconds long; the kubelet may catch it
        if ((cs.restartCount ?? 0) === 0) {
          assert.deepEqual([d.cause, d.exitCode], ['ContainerExited', 3], `${state}, no restart yet: ${d.sentence}`);
        } else {
          assert.deepEqual([d.cause, d.restarts, d.exitCode], ['CrashLoopBackOff', cs.restartCount, 3], `${state}, ${cs.restartCount} restarts: ${d.sentence}`);
        }
      }
      assert.ok(states.has('terminated') && states.has('waiting CrashLoopBackOff'), [...states].join(', '));
    });

    it('explains a readiness probe that fails, with the probe’s own output', async () => {
      await createPod('probe', {
        containers: [busybox('app', ['sleep', '3600'], {
          readinessProbe: { exec: { command: ['sh', '-c', 'echo not warm; exit 1'] }, periodSeconds: 1, failureThreshold: 1 },
        })],
      });
      await waitForEvent(cp.client, ns, 'probe', (e) => e.reason === 'Unhealthy' && /^Readiness probe failed: not warm/.test(e.message ?? ''));
      const x = await explainJson('probe');
      assert.deepEqual([x.diagnosis.stage, x.diagnosis.cause, x.diagnosis.subject], ['containersReady', 'ReadinessProbeFailing', 'app']);
      assert.equal(x.diagnosis.sentence, 'Container app is running but its readiness probe fails (Readiness probe failed: not warm); fix what the probe checks or the probe itself.');
      const pod = await cp.client.get<V1Pod>(podPath(ns, 'probe'));
      assert.deepEqual([podCondition(pod, 'ContainersReady')?.status, podCondition(pod, 'Ready')?.status], ['False', 'False']);
    });

    it('explains a readiness gate a ReadinessGate controller holds, until it opens and the kubelet turns the pod Ready', async () => {
      const gateType = 'example.com/warm';
      let open = false;
      const manager = new Manager({ client: cp.client });
      const gate = new ReadinessGate({ conditionType: gateType, namespace: ns, evaluate: () => (open ? { status: true, reason: 'Warm' } : { status: false, reason: 'Cold', message: 'cache not loaded' }) });
      const controller = gate.register(manager);
      await manager.start();
      try {
        await createPod('gated', { readinessGates: [{ conditionType: gateType }], containers: [busybox('app', ['sleep', '3600'])] });
        await waitForPodCondition(cp.client, ns, 'gated', 'ContainersReady', { timeoutMs: 90_000 });
        const held = await waitForPod(cp.client, ns, 'gated', 'Ready=False because of the gate', (p) =>
          podCondition(p, gateType)?.status === 'False' && podCondition(p, 'Ready')?.reason === 'ReadinessGatesNotReady' && /example\.com\/warm/.test(podCondition(p, 'Ready')?.message ?? ''));
        assert.equal(podCondition(held, 'Ready')?.status, 'False');
        const x = await explainJson('gated');
        assert.deepEqual([x.diagnosis.stage, x.diagnosis.cause, x.diagnosis.subject], ['ready', 'ReadinessGateFalse', gateType]);
        assert.match(x.diagnosis.sentence, /^Readiness gate "example\.com\/warm" is False \(Cold: cache not loaded\) for \S+; the controller that owns it decides when it turns True\.$/);

        open = true;
        controller.enqueue(`${ns}/gated`);
        // The kubelet, not podlife, turns Ready True once it sees the gate's condition True.
        const ready = await waitForPodCondition(cp.client, ns, 'gated', 'Ready', { timeoutMs: 60_000 });
        assert.equal(podCondition(ready, gateType)?.reason, 'Warm');
        assert.equal((await explainJson('gated')).diagnosis.cause, 'Ready');
      } finally {
        await manager.stop();
      }
    });
  });

  describe('network conditions from the real pod IP (DESIGN 5)', () => {
    it('publishes IPv4Ready True for the address the CNI bridge gave, which serves, and IPv6Ready False', async () => {
      const manager = new Manager({ client: cp.client });
      networkConditionsController(manager, { namespace: ns });
      // Every version of the pod the API server sends (the controller's own informer, shared).
      const versions: V1Pod[] = [];
      const seen = manager.informer<V1Pod>({ path: `/api/v1/namespaces/${ns}/pods`, transform: stripManagedFields });
      seen.on('add', (p) => versions.push(p));
      seen.on('update', (p) => versions.push(p));
      await manager.start();
      try {
        await createPod('net', { containers: [busybox('web', ['httpd', '-f', '-p', '8080', '-h', '/etc'])] }, { annotations: { 'podlife.dev/network-conditions': 'true' } });
        const pod = await waitForPod(cp.client, ns, 'net', 'IPv4Ready True and IPv6Ready NoAddressOfFamily, naming the IPv4 address', (p) =>
          podCondition(p, NetworkConditionType.IPv4Ready)?.status === 'True' &&
          podCondition(p, NetworkConditionType.IPv6Ready)?.reason === 'NoAddressOfFamily' &&
          /has no IPv6 address/.test(podCondition(p, NetworkConditionType.IPv6Ready)?.message ?? ''));
        const ip = pod.status?.podIP ?? '';
        assert.deepEqual(pod.status?.podIPs?.map((p) => p.ip), [ip]);
        assert.ok(inSubnet(ip, node.podSubnet), `${ip} in ${node.podSubnet}`);
        assert.notEqual(ip, node.ip);
        const v4 = podCondition(pod, NetworkConditionType.IPv4Ready);
        assert.match(v4?.message ?? '', new RegExp(`^IPv4 address ${ip.replace(/\./g, '\\.')}; `));
        assert.equal(v4?.reason, podCondition(pod, 'PodReadyToStartContainers')?.reason ?? 'SandboxReady');
        const v6 = podCondition(pod, NetworkConditionType.IPv6Ready);
        assert.equal(v6?.status, 'False');
        assert.match(v6?.message ?? '', new RegExp(`has no IPv6 address \\(only ${ip.replace(/\./g, '\\.')}\\)`));
        // The two conditions change in one write (ADR 0239): no version of the pod has one without
        // the other, nor IPv4Ready True beside an IPv6Ready written before the pod had its address.
        const written = versions.filter((p) => p.metadata?.name === 'net' && podCondition(p, NetworkConditionType.IPv4Ready));
        assert.ok(written.length > 0, 'the informer saw the conditions written');
        for (const p of written) {
          const [a, b] = [podCondition(p, NetworkConditionType.IPv4Ready), podCondition(p, NetworkConditionType.IPv6Ready)];
          assert.ok(b, `IPv6Ready beside IPv4Ready at resourceVersion ${p.metadata?.resourceVersion}`);
          if (a?.status === 'True') assert.match(b.message ?? '', /has no IPv6 address \(only /, `IPv6Ready at resourceVersion ${p.metadata?.resourceVersion}`);
        }
        // The address is real: the pod answers on it from the node.
        const res = await fetch(`http://${ip}:8080/hostname`, { signal: AbortSignal.timeout(10_000) });
        assert.equal(res.status, 200);
        assert.equal((await res.text()).trim(), 'net');
      } finally {
        await manager.stop();
      }
    });
  });

});

function inSubnet(ip: string, cidr: string): boolean {
  const [base = '', bits = '32'] = cidr.split('/');
  const n = (a: string): number => a.split('.').reduce((acc, o) => (acc << 8) + Number(o), 0) >>> 0;
  const mask = Number(bits) === 0 ? 0 : (~0 << (32 - Number(bits))) >>> 0;
  return ((n(ip) & mask) >>> 0) === ((n(base) & mask) >>> 0);
}
