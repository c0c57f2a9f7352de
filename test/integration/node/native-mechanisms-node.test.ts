/**
 * Native mechanisms by what the nodes declare (DESIGN 3.8), on real nodes of mixed releases: a
 * control plane and a node of the run's release (PODLIFE_K8S_VERSION), a second real node whose
 * kubelet is the oldest supported release (1.34.4; the same release when the run is 1.34), the
 * podlife webhook called by the API server and the keystone controller.
 *
 * What each release does is asserted from what the nodes report, never skipped:
 * - RestartPod: a node of 1.36 or later declares RestartAllContainersOnContainerExits (KEP-5532,
 *   beta and on there; NodeDeclaredFeatures on) and the kubelet restarts every container in place;
 *   on a pod that may land on a node declaring nothing, the webhook adds no rule and the
 *   controller deletes the pod instead (TerminatePod);
 * - native sidecars `auto`: one stand-in Node object claims kubelet 1.28 (no kubelet behind it,
 *   tainted NoSchedule: this host cannot run a 1.28 kubelet against a 1.34+ control plane); a pod
 *   that may run there is left unconverted, one whose nodeSelector excludes it is converted.
 *
 * @releases every — what each kubelet declares (RestartPod in place from 1.36), the fallbacks
 *   where a node lacks it, and kubelet skew.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { V1Container, V1Node, V1Pod } from '@kubernetes/client-node';
import { ContentType, createLogger, isNotFound, resourcePath } from '@podlife/core';
import { ControllerApp, devCertificates } from '@podlife/controller';
import { nativeMechanismNotes, RESTART_ALL_CONTAINERS_FEATURE } from '@podlife/keystone';
import { explainPod, type PodEvent } from '@podlife/pod-conditions';
import { containerLog, type ControlPlane, createNamespace, keystoneFlags, kubernetesMinor, localWebhook, type LocalWebhook, nativeKey, ON_KEYSTONE_EXIT, type RealNode, roleKey, startControlPlane, startNode, stopKey, waitFor } from '@podlife/testbed';

const OLDEST = 'v1.34.4';
const podsPath = (ns: string, name?: string) => resourcePath({ version: 'v1', resource: 'pods', namespace: ns, name });
const statusOf = (p: V1Pod, c: string) => [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])].find((s) => s.name === c);
const condition = (p: V1Pod, type: string) => p.status?.conditions?.find((c) => c.type === type);

describe('native mechanisms on real nodes of mixed releases (RestartPod, native sidecars auto)', function () {
  this.timeout(240_000);
  let cp: ControlPlane;
  let current: RealNode;
  let old: RealNode;
  let app: ControllerApp;
  let hook: LocalWebhook | undefined;
  let ns: string;
  let minor: number;
  const hookName = `podlife-native-${randomBytes(3).toString('hex')}`;
  const fakeOld = 'stand-in-kubelet-1-28';

  function busybox(name: string, script: string): V1Container {
    return { name, image: current.images.busybox, imagePullPolicy: 'Never', command: ['sh', '-c', script], volumeMounts: [{ name: 'sync', mountPath: '/sync' }] };
  }

  /** A keystone that exits 3 after 4 s on its first run and stays up on the next (the emptyDir remembers), and a sidecar. */
  function restartPodSpec(name: string, nodeSelector?: Record<string, string>) {
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name,
        labels: { 'podlife.dev/admission': 'enabled' },
        annotations: { [roleKey('app')]: 'keystone', [roleKey('proxy')]: 'sidecar', [ON_KEYSTONE_EXIT]: 'RestartPod' },
      },
      spec: {
        restartPolicy: 'Never',
        terminationGracePeriodSeconds: 5,
        enableServiceLinks: false,
        ...(nodeSelector ? { nodeSelector } : {}),
        volumes: [{ name: 'sync', emptyDir: {} }],
        containers: [
          busybox('app', 'if [ -e /sync/ran ]; then echo second run; sleep 3600; fi; touch /sync/ran; echo first run; sleep 4; exit 3'),
          busybox('proxy', "trap 'exit 0' TERM; sleep 3600 & wait"),
        ],
      },
    };
  }

  const getPod = (name: string) => cp.client.get<V1Pod>(podsPath(ns, name));
  const findPod = (name: string) => getPod(name).catch((err: unknown) => (isNotFound(err) ? undefined : Promise.reject(err)));
  const describe_ = async (name: string) => JSON.stringify((await findPod(name))?.status ?? 'gone');
  const eventNotes = async (name: string) => (await cp.client.get<{ items: { type?: string; reason?: string; note?: string }[] }>(
    resourcePath({ group: 'events.k8s.io', version: 'v1', resource: 'events', namespace: ns }), { fieldSelector: `regarding.name=${name}` })).items.map((e) => `${e.type} ${e.reason}: ${e.note}`);
  /** Waits for an Event of the pod matching `pattern` ("Type Reason: note"). */
  const eventLike = (name: string, pattern: RegExp) => waitFor(`an Event of ${name} like ${pattern}`, async () => (await eventNotes(name)).find((n) => pattern.test(n)), { timeoutMs: 30_000 })
    .catch(async (err: Error) => Promise.reject(new Error(`${err.message}\nEvents: ${JSON.stringify(await eventNotes(name))}`)));

  before(async function () {
    this.timeout(600_000);
    cp = await startControlPlane({ controllerManager: true, scheduler: true });
    minor = kubernetesMinor(cp.version);
    current = await startNode(cp, { name: 'node-current' });
    old = await startNode(cp, { name: 'node-oldest', kubernetes: OLDEST });
    // The stand-in for a 1.28 node: a Node object only, tainted so that nothing is scheduled there.
    await cp.client.create('/api/v1/nodes', { metadata: { name: fakeOld, labels: { 'kubernetes.io/hostname': fakeOld } }, spec: { taints: [{ key: 'podlife.dev/stand-in', effect: 'NoSchedule' }] } });
    await cp.client.patch(`/api/v1/nodes/${fakeOld}/status`, { status: { nodeInfo: { kubeletVersion: 'v1.28.15' } } }, ContentType.MergePatch);
    ns = await createNamespace(cp.client, 'native');
    hook = await localWebhook(cp.client, hookName);
    app = new ControllerApp({
      flags: keystoneFlags({ namespaces: [ns], webhookPort: 0, tlsCertFile: hook.certFile, tlsKeyFile: hook.keyFile }),
      config: { execCommands: {}, ephemeralContainerImage: current.images.busybox, keystoneLimit: 1, defaultStrategy: 'auto', namespaces: [ns] },
      client: cp.client,
      kubeConfig: cp.kubeConfig,
      logger: createLogger('native-mechanisms', { level: 'warn' }),
      bindAddress: '127.0.0.1',
    });
    await app.start();
    await hook.register(app.webhook!.port, [ns]);
    // The API server picks a new webhook configuration up within a moment: wait until it converts.
    await waitFor('the webhook in the admission chain', async () => {
      const dry = await cp.client.create<V1Pod>(podsPath(ns), restartPodSpec(`dry-${randomBytes(3).toString('hex')}`, { 'kubernetes.io/hostname': current.name }), { dryRun: 'All' });
      return dry.metadata?.labels?.['podlife.dev/managed'] === 'true';
    }, { timeoutMs: 20_000 });
  });

  after(async () => {
    await app?.stop();
    await hook?.remove();
    await old?.stop();
    await current?.stop();
    await cp?.stop();
  });

  it('each node declares what its release has: RestartAllContainersOnContainerExits from 1.36 (beta, on), nothing before 1.35', async () => {
    const declared = async (name: string) => (await cp.client.get<V1Node>(`/api/v1/nodes/${name}`)).status?.declaredFeatures ?? [];
    assert.equal(old.kubeletVersion, minor === 34 ? cp.version : OLDEST);
    assert.deepEqual(await declared(old.name), [], `a ${OLDEST} kubelet declares nothing (no NodeDeclaredFeatures)`);
    const features = await declared(current.name);
    if (minor >= 36) assert.ok(features.includes(RESTART_ALL_CONTAINERS_FEATURE), `kubelet ${current.kubeletVersion} declares ${features.join(', ')}`);
    else assert.ok(!features.includes(RESTART_ALL_CONTAINERS_FEATURE), `kubelet ${current.kubeletVersion} declares ${features.join(', ') || 'nothing'}`);
  });

  it('RestartPod on a pod bound for the current node: restarted in place where the node declares the feature, else deleted (TerminatePod)', async () => {
    const created = await cp.client.create<V1Pod>(podsPath(ns), restartPodSpec('pinned', { 'kubernetes.io/hostname': current.name }));
    const uid = created.metadata!.uid!;
    const keystone = created.spec!.containers.find((c) => c.name === 'app')!;
    if (minor >= 36) {
      assert.deepEqual(keystone.restartPolicyRules, [{ action: 'RestartAllContainers', exitCodes: { operator: 'NotIn' } }], 'the webhook added the rule');
      assert.equal(keystone.restartPolicy, 'Never');
      assert.equal(created.metadata?.annotations?.[nativeKey('app')], 'restart-all-containers');
      // The first run exits 3 after 2 s; the kubelet may restart everything before a status with
      // that exit reaches the API server, so the run is told apart by its container id.
      const first = await waitFor('the first run of app', async () => {
        const p = await getPod('pinned');
        return statusOf(p, 'app')?.state?.running && p;
      }, { timeoutMs: 60_000 }).catch(async (err: Error) => Promise.reject(new Error(`${err.message}\n${await describe_('pinned')}`)));
      const firstId = statusOf(first, 'app')?.containerID;
      const firstStarted = Date.parse(String(statusOf(first, 'app')?.state?.running?.startedAt));
      const again = await waitFor('app running again in the same pod', async () => {
        const p = await getPod('pinned');
        const s = statusOf(p, 'app');
        return s?.state?.running && s.containerID !== firstId && statusOf(p, 'proxy')?.state?.running && p;
      }, { timeoutMs: 60_000 }).catch(async (err: Error) => Promise.reject(new Error(`${err.message}\n${await describe_('pinned')}`)));
      assert.deepEqual([statusOf(again, 'app')?.lastState?.terminated?.reason, statusOf(again, 'proxy')?.lastState?.terminated?.reason], ['RestartingAllContainers', 'RestartingAllContainers'], 'every container, the native sidecar too');
      assert.ok(nativeMechanismNotes(again).includes('container app: restart rules RestartAllContainers on any exit code; the kubelet last restarted it in place with the whole pod (RestartAllContainers)'), nativeMechanismNotes(again).join('\n'));
      assert.equal(again.metadata?.uid, uid, 'same pod (UID), restarted in place');
      assert.equal(again.metadata?.deletionTimestamp, undefined, 'not deleted');
      const restarting = condition(again, 'AllContainersRestarting');
      assert.equal(restarting?.status, 'False', 'the kubelet reports the restart as done');
      assert.ok(Date.parse(String(restarting?.lastTransitionTime)) >= firstStarted + 4000, 'and it happened after the first run ended');
      assert.equal(condition(again, 'podlife.dev/KeystoneFinished'), undefined, 'podlife left it to the kubelet');
      assert.match(await containerLog(cp.client, ns, 'pinned', 'app'), /second run/, 'the emptyDir survived: same volumes');
    } else {
      assert.equal(keystone.restartPolicyRules, undefined, `no rule: kubelet ${current.kubeletVersion} does not declare the feature`);
      await expectTerminatePodFallback('pinned', uid);
    }
  });

  it('RestartPod on a pod that may land on the oldest node: no rule at admission, the keystone exit deletes the pod (TerminatePod)', async () => {
    const created = await cp.client.create<V1Pod>(podsPath(ns), restartPodSpec('anywhere'));
    assert.equal(created.spec!.containers.find((c) => c.name === 'app')!.restartPolicyRules, undefined);
    assert.equal(created.metadata?.annotations?.[nativeKey('app')], undefined);
    await expectTerminatePodFallback('anywhere', created.metadata!.uid!);
  });

  it('RestartPod with the rule written by the pod author, bound to the oldest node: its kubelet ignores the rule, so podlife deletes the pod', async () => {
    const spec = restartPodSpec('forced-old');
    (spec.spec as Record<string, unknown>).nodeName = old.name; // past the scheduler, which would refuse the node
    const keystone = spec.spec.containers[0] as V1Container;
    keystone.restartPolicy = 'Never';
    keystone.restartPolicyRules = [{ action: 'RestartAllContainers', exitCodes: { operator: 'NotIn', values: [] } }];
    if (minor === 35) {
      // 1.35's API server knows the action only behind its alpha gate (off): the pod is refused.
      await assert.rejects(cp.client.create<V1Pod>(podsPath(ns), spec), /RestartAllContainers/);
      return;
    }
    const created = await cp.client.create<V1Pod>(podsPath(ns), spec);
    if (minor < 35) {
      // 1.34's API server drops restart rules (ContainerRestartRules, alpha, off): nothing to honour.
      assert.equal(created.spec!.containers[0]!.restartPolicyRules, undefined);
      await expectTerminatePodFallback('forced-old', created.metadata!.uid!, /has no RestartAllContainers restart rule/);
      return;
    }
    assert.equal(created.spec!.containers[0]!.restartPolicyRules?.[0]?.action, 'RestartAllContainers');
    await expectTerminatePodFallback('forced-old', created.metadata!.uid!, /ignores the keystone's RestartAllContainers rule/);
  });

  async function expectTerminatePodFallback(name: string, uid: string, why = /RestartPod cannot restart in place: .*TerminatePod/): Promise<void> {
    await waitFor(`pod ${name} deleted by podlife after the keystone exit`, async () => {
      const p = await findPod(name);
      return p === undefined || p.metadata?.uid !== uid || !!p.metadata?.deletionTimestamp;
    }, { timeoutMs: 60_000 }).catch(async (err: Error) => Promise.reject(new Error(`${err.message}\n${await describe_(name)}`)));
    // The record (condition and Event) is written right after the deletion is asked for.
    const note = await eventLike(name, /^Normal KeystoneFinished: .*RestartPod cannot restart in place: .*TerminatePod/);
    assert.match(note, why);
  }

  it('native sidecars auto: not converted when a node that may run the pod has kubelet 1.28, converted when the nodeSelector leaves it out', async () => {
    const spec = (name: string, nodeSelector?: Record<string, string>) => {
      const s = restartPodSpec(name, nodeSelector);
      delete (s.metadata.annotations as Record<string, string>)[ON_KEYSTONE_EXIT];
      return s;
    };
    const anywhere = await cp.client.create<V1Pod>(podsPath(ns), spec('auto-anywhere'), { dryRun: 'All' });
    assert.deepEqual(anywhere.spec?.containers.map((c) => c.name), ['app', 'proxy'], `the ${fakeOld} node may run it`);
    const pinned = await cp.client.create<V1Pod>(podsPath(ns), spec('auto-pinned', { 'kubernetes.io/hostname': old.name }), { dryRun: 'All' });
    assert.deepEqual(pinned.spec?.initContainers?.map((c) => [c.name, c.restartPolicy]), [['proxy', 'Always']], `only ${old.name} (kubelet ${old.kubeletVersion}) may run it`);
    assert.equal(pinned.metadata?.annotations?.[nativeKey('proxy')], 'sidecar');
  });

  describe('conversion keeps the stop spec meaning (ADR 0211)', () => {
    it('a sidecar with preset:istio stays a container (no preStop means the same), podlife stops it itself; a signal:TERM sidecar becomes native', async () => {
      const created = await cp.client.create<V1Pod>(podsPath(ns), {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: 'kept-preset',
          labels: { 'podlife.dev/admission': 'enabled' },
          annotations: { [roleKey('log')]: 'sidecar', [roleKey('istio-proxy')]: 'sidecar', [stopKey('istio-proxy')]: 'preset:istio', [stopKey('usr1')]: 'signal:USR1', [roleKey('usr1')]: 'sidecar' },
        },
        spec: {
          restartPolicy: 'Never',
          terminationGracePeriodSeconds: 10,
          enableServiceLinks: false,
          nodeSelector: { 'kubernetes.io/hostname': current.name },
          volumes: [{ name: 'sync', emptyDir: {} }],
          containers: [
            busybox('app', 'sleep 2'),
            busybox('log', "trap 'exit 0' TERM; sleep 3600 & wait"),
            { name: 'istio-proxy', image: current.images.quitserver, imagePullPolicy: 'Never' },
            busybox('usr1', "trap 'exit 0' USR1 TERM; sleep 3600 & wait"),
          ],
        },
      });
      assert.deepEqual(created.spec?.initContainers?.map((c) => [c.name, c.restartPolicy]), [['log', 'Always']]);
      assert.deepEqual(created.spec?.containers.map((c) => c.name), ['app', 'istio-proxy', 'usr1']);
      assert.equal(created.metadata?.annotations?.[nativeKey('istio-proxy')], 'unconverted');
      assert.match(await eventLike('kept-preset', /^Normal SidecarNotConverted: sidecar istio-proxy /), /preset:istio POSTs to 127\.0\.0\.1:15020\/quitquitquit .*405/);
      assert.match(await eventLike('kept-preset', /^Normal SidecarNotConverted: sidecar usr1 /), /signal:USR1 needs lifecycle\.stopSignal/);
      const done = await waitFor('the kept sidecars stopped by podlife, the native one by the kubelet', async () => {
        const p = await getPod('kept-preset');
        return ['istio-proxy', 'usr1', 'log'].every((c) => statusOf(p, c)?.state?.terminated) && p;
      }, { timeoutMs: 90_000 }).catch(async (err: Error) => Promise.reject(new Error(`${err.message}\n${await describe_('kept-preset')}\n${JSON.stringify(await eventNotes('kept-preset'))}`)));
      assert.equal(statusOf(done, 'istio-proxy')?.state?.terminated?.exitCode, 0, 'its quit endpoint, not a signal (143)');
      assert.equal(condition(done, 'podlife.dev/NativeMechanisms')?.status, 'True', 'written before the sidecars were stopped');
      const notes = nativeMechanismNotes(done);
      assert.ok(notes.some((n) => /^native sidecar log: terminated with exit code 0/.test(n)), notes.join('\n'));
      assert.ok(notes.some((n) => /^sidecar istio-proxy was not made a native sidecar: preset:istio/.test(n)), notes.join('\n'));
    });
  });

  describe('what others undo (a webhook after podlife strips what it does not know)', () => {
    let stripper: https.Server;
    const stripName = `zz-strip-${randomBytes(3).toString('hex')}`;

    before(async () => {
      const certs = await devCertificates(['127.0.0.1']);
      // An older injector: it decodes pods with a client that predates native sidecars, restart
      // rules and stop signals, and writes them back without those fields.
      stripper = https.createServer({ cert: certs.certPem, key: certs.keyPem }, (req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const review = JSON.parse(Buffer.concat(chunks).toString()) as { request: { uid: string; object: V1Pod } };
          const p = review.request.object;
          const ops: { op: string; path: string }[] = [];
          (p.spec?.initContainers ?? []).forEach((c, i) => {
            if (c.restartPolicy) ops.push({ op: 'remove', path: `/spec/initContainers/${i}/restartPolicy` });
            if (c.lifecycle?.stopSignal) ops.push({ op: 'remove', path: `/spec/initContainers/${i}/lifecycle/stopSignal` });
          });
          (p.spec?.containers ?? []).forEach((c, i) => {
            if (c.restartPolicyRules) ops.push({ op: 'remove', path: `/spec/containers/${i}/restartPolicyRules` }, { op: 'remove', path: `/spec/containers/${i}/restartPolicy` });
          });
          const response = { uid: review.request.uid, allowed: true, ...(ops.length > 0 ? { patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(ops)).toString('base64') } : {}) };
          res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response }));
        });
      });
      await new Promise<void>((resolve) => stripper.listen(0, '127.0.0.1', resolve));
      const port = (stripper.address() as AddressInfo).port;
      // Configurations are called in name order: this one after podlife's.
      await cp.client.create('/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', {
        metadata: { name: stripName },
        webhooks: [{
          name: 'strip.example.com',
          admissionReviewVersions: ['v1'],
          clientConfig: { url: `https://127.0.0.1:${port}/`, caBundle: Buffer.from(certs.caPem).toString('base64') },
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
          failurePolicy: 'Fail',
          sideEffects: 'None',
          timeoutSeconds: 5,
        }],
      });
      await waitFor('the stripping webhook in the admission chain', async () => {
        const dry = await cp.client.create<V1Pod>(podsPath(ns), restartPodSpec(`dry-${randomBytes(3).toString('hex')}`, { 'kubernetes.io/hostname': current.name }), { dryRun: 'All' });
        return dry.metadata?.annotations?.[nativeKey('proxy')] === 'sidecar' && dry.spec?.initContainers?.[0]?.restartPolicy === undefined;
      }, { timeoutMs: 20_000 });
    });
    after(async () => {
      await cp.client.delete(`/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${stripName}`).catch(() => undefined);
      stripper?.close();
    });

    it('a native sidecar and a restart rule stripped after podlife: the controller names the cause in Warnings', async () => {
      const created = await cp.client.create<V1Pod>(podsPath(ns), restartPodSpec('undone', { 'kubernetes.io/hostname': current.name }));
      assert.deepEqual(created.spec?.initContainers?.map((c) => [c.name, c.restartPolicy ?? 'none']), [['proxy', 'none']], 'the stripper ran after podlife');
      assert.equal(created.metadata?.annotations?.[nativeKey('proxy')], 'sidecar');
      assert.match(await eventLike('undone', /^Warning NativeSidecarUndone: /), /sidecar proxy .*lost restartPolicy: Always \(a mutating webhook after podlife's/);
      if (minor >= 36) {
        assert.equal(created.metadata?.annotations?.[nativeKey('app')], 'restart-all-containers', 'the rule was added');
        assert.equal(created.spec?.containers.find((c) => c.name === 'app')?.restartPolicyRules, undefined, 'and stripped');
        assert.match(await eventLike('undone', /^Warning RestartRuleStripped: /), /keystone app .*RestartAllContainers restart rule .* is gone/);
      } else {
        assert.equal(created.metadata?.annotations?.[nativeKey('app')], undefined, 'no rule added on this release, so none to strip');
      }
      // The Events go out just before the condition is written.
      const p = await waitFor('NativeMechanisms=False', async () => {
        const x = await getPod('undone');
        return condition(x, 'podlife.dev/NativeMechanisms')?.status === 'False' && x;
      }, { timeoutMs: 20_000 });
      assert.ok(nativeMechanismNotes(p).some((n) => /^warning: sidecar proxy was made a native sidecar by podlife's webhook and has lost restartPolicy: Always/.test(n)), nativeMechanismNotes(p).join('\n'));
      await cp.client.delete(podsPath(ns, 'undone'), { gracePeriodSeconds: '0' }).catch(() => undefined);
    });
  });

  describe('podlife explain on the real node', () => {
    it('PodReadyToStartContainers False never says why the sandbox fails (1.37: only that none exists): the cause comes from the Events', async () => {
      const handler = `missing-${randomBytes(3).toString('hex')}`;
      await cp.client.create('/apis/node.k8s.io/v1/runtimeclasses', { metadata: { name: handler }, handler });
      try {
        await cp.client.create(podsPath(ns), {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'no-sandbox' },
          spec: { runtimeClassName: handler, nodeSelector: { 'kubernetes.io/hostname': current.name }, enableServiceLinks: false, volumes: [{ name: 'sync', emptyDir: {} }], containers: [busybox('app', 'sleep 60')] },
        });
        const events = async () => (await cp.client.get<{ items: PodEvent[] }>(`/api/v1/namespaces/${ns}/events`, { fieldSelector: 'involvedObject.name=no-sandbox' })).items;
        await waitFor('FailedCreatePodSandBox', async () => (await events()).some((e) => e.reason === 'FailedCreatePodSandBox'), { timeoutMs: 60_000 });
        const p = await waitFor('the sandbox condition False', async () => {
          const x = await getPod('no-sandbox');
          return condition(x, 'PodReadyToStartContainers')?.status === 'False' && x;
        }, { timeoutMs: 30_000 });
        const c = condition(p, 'PodReadyToStartContainers');
        // Neither says why creating the sandbox fails: 1.37 names why one is needed, earlier releases nothing.
        if (minor >= 37) assert.deepEqual([c?.reason, c?.message], ['PodSandboxNotReady', 'no pod sandbox exists'], cp.version);
        else assert.deepEqual([c?.reason, c?.message], [undefined, undefined], cp.version);
        const d = explainPod(p, await events(), Date.now());
        assert.equal(d.cause, 'FailedCreatePodSandBox');
        assert.match(d.sentence, new RegExp(`cannot create the pod sandbox: .*${handler}`));
      } finally {
        await cp.client.delete(podsPath(ns, 'no-sandbox'), { gracePeriodSeconds: '0' }).catch(() => undefined);
        await cp.client.delete(`/apis/node.k8s.io/v1/runtimeclasses/${handler}`).catch(() => undefined);
      }
    });
  });
});
