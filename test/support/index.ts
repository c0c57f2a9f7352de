/**
 * @podlife/testbed: real Kubernetes for podlife's suites, benchmarks and demo (README.md). Private
 * to this repository, never published. What it offers, by what you need:
 */

// A control plane: etcd, kube-apiserver and (for Jobs, nodes) controllers of a pinned release.
export { kubernetesMinor, sharedControlPlane, startControlPlane, stopSharedControlPlane } from './control-plane.js';
export type { ControlPlane, ControlPlaneOptions } from './control-plane.js';

// A real node: kubelet, containerd, runc and the CNI bridge, with local images.
export { containerLog, nodeLeftovers, nodePrerequisiteProblem, sharedRealCluster, startNode, stopSharedRealCluster } from './node.js';
export type { ContainerTimes, NodeOptions, RealCluster, RealNode } from './node.js';
export { klogLineMs, readKubeletLog } from './klog.js';
export type { KubeletLog } from './klog.js';

// The simulated kubelet (scale and version skew) and the scripts it runs.
export { SimulatedKubelet } from './kubelet.js';
export type { KubeletRecord, SimulatedKubeletOptions, SimulatedNode } from './kubelet.js';
export { SCRIPT_ANNOTATION, SIGNAL_NUMBERS, containerScript, exitCodeForSignal, parseScriptAnnotation, signalSentToPid1 } from './kubelet-script.js';
export type { ContainerScript, PodScript, SignalName } from './kubelet-script.js';

// What a test puts on the cluster: namespaces, pods, podlife's annotation keys, manifests, CRDs.
export { createNamespace } from './namespaces.js';
export { podOf, podTemplate } from './pods.js';
export type { PodTemplate, PodTemplateOptions } from './pods.js';
export { COMPLETION, NATIVE_SIDECARS, ON_KEYSTONE_EXIT, nativeKey, roleAnnotations, roleKey, stopKey } from './keys.js';
export type { Role } from './keys.js';
export { manifestPath } from './manifests.js';
export type { ManifestRef } from './manifests.js';
export { conditionOf, firstSeen, getNode, hasTaint, installNrcStandInCrd, installRuleCrd, nodeCondition, nodePath, setNodeConditions } from './node-readiness.js';
export type { Sighting, Watching } from './node-readiness.js';

// podlife itself: the controller's flags in-process, its webhook on this host, its CLI as a process.
export { keystoneFlags } from './controller-flags.js';
export { localWebhook } from './webhook.js';
export type { LocalWebhook } from './webhook.js';
export { podlife } from './cli.js';
export type { CliResult } from './cli.js';

// Watching and waiting: a pod's history, an informer against the server, polls and retries.
export { recordPod } from './pod-recorder.js';
export type { PodRecording } from './pod-recorder.js';
export { configMapsPath, expectStoreMatchesServer, serverState, storeState } from './informer-state.js';
export type { StateOptions } from './informer-state.js';
export { retry, waitFor } from './wait.js';
export type { WaitOptions } from './wait.js';
export { startHoldingProxy } from './throttle-proxy.js';
export type { HoldingProxy, HoldingProxyOptions } from './throttle-proxy.js';

// Processes, files and plumbing: nothing outlives a run.
export { isAlive, killAllProcesses, liveProcesses, makeTempDir, registerCleanupScript, removeTempDir, runRegisteredCleanup, startProcess } from './processes.js';
export type { ExitInfo, ManagedProcess } from './processes.js';
export { freePort, freePorts } from './ports.js';
export { seededRandom } from './random.js';
export { createCertificateAuthority, createServiceAccountKeys } from './pki.js';
export type { CertificateAuthority, IssueOptions, KeyPairPem } from './pki.js';
export { kubeconfigJson, writeKubeconfig } from './kubeconfig.js';
export type { KubeconfigInput } from './kubeconfig.js';

// Sidecar injectors' pod shapes and a test injector webhook (lifecycle policies, ADR 0270).
export { INJECTOR_SHAPES, SAW_POLICIES_ANNOTATION, SHAPE_ANNOTATION, injectionOps, testInjector } from './injectors.js';
export type { ContainerTransform, InjectorShape, TestInjector } from './injectors.js';
