/**
 * The Jobs the chaos soak runs: one shape per keystone behaviour of DESIGN 3, each with the
 * outcome a correct controller gives it.
 *
 * Guarantees: pure; a Job's containers, annotations, simulated script and expected outcome are
 * decided by its kind and a seeded random source alone, so a run can be repeated; the same
 * scripts drive the simulated kubelet and, as busybox containers, the real node.
 */
import { COMPLETION, containerScript, ON_KEYSTONE_EXIT, type PodScript, roleKey } from '@podlife/testbed';
import { busyboxContainer, recordVolume } from './busybox.js';

export type Expected = 'complete' | 'fail';

export interface JobKind {
  /** Part of every Job's name (`soak-<name>-0007`), so a pod's kind is read back from its name. */
  readonly name: string;
  readonly what: string;
  readonly expected: Expected;
  /** Containers whose exit fires the rule: the keystone (rule K) or every main (rule S). */
  readonly trigger: readonly string[];
  /** Main containers (not sidecars): the order check needs them stopped before any sidecar. */
  readonly mains: readonly string[];
  readonly sidecars: readonly string[];
  /**
   * The pod is ended by the kubelet by design (TerminatePod deletes it; `completion: phase` records
   * the phase, then the kubelet ends the rest); elsewhere the kubelet ending it is an escalation.
   */
  readonly endedByKubelet?: boolean;
  /** Extra Job spec fields the kind needs. */
  readonly jobSpec?: Record<string, unknown>;
  build(random: () => number): { roles: Record<string, 'keystone' | 'sidecar'>; annotations: Record<string, string>; script: PodScript; containers: string[] };
}

/** Milliseconds in [lo, hi). */
function between(random: () => number, lo: number, hi: number): number {
  return Math.floor(lo + random() * (hi - lo));
}

/** A sidecar that exits 0 on TERM after a short delay (a well-behaved proxy). */
function cleanSidecar(random: () => number) {
  return { exitOnSignal: { TERM: 0 }, signalExitDelayMs: between(random, 0, 1500) };
}

export const JOB_KINDS: readonly JobKind[] = [
  {
    name: 'rule-s', what: 'rule S: app exits 0, the proxy sidecar is stopped (exits 0 on TERM)', expected: 'complete',
    trigger: ['app'], mains: ['app'], sidecars: ['proxy'],
    build: (random) => ({
      containers: ['app', 'proxy'], roles: { proxy: 'sidecar' }, annotations: {},
      script: { containers: { app: { runMs: between(random, 1000, 6000), exitCode: 0 }, proxy: cleanSidecar(random) } },
    }),
  },
  {
    name: 'rule-k', what: 'rule K: the keystone exits 0; the worker (a main) then the proxy sidecar are stopped', expected: 'complete',
    trigger: ['main'], mains: ['main', 'worker'], sidecars: ['proxy'],
    build: (random) => ({
      containers: ['main', 'worker', 'proxy'], roles: { main: 'keystone', proxy: 'sidecar' }, annotations: {},
      script: {
        containers: {
          main: { runMs: between(random, 1000, 6000), exitCode: 0 },
          worker: { exitOnSignal: { TERM: 0 }, signalExitDelayMs: between(random, 0, 1000) },
          proxy: cleanSidecar(random),
        },
      },
    }),
  },
  {
    name: 'terminate', what: 'on-keystone-exit TerminatePod: the keystone exits 0, the pod is deleted within its grace', expected: 'complete',
    trigger: ['main'], mains: ['main'], sidecars: ['proxy'],
    // Without it the Job controller counts a pod deleted before its phase is terminal as failed
    // (its own rule for orphans), whatever its containers then exit with; with it, the phase decides.
    jobSpec: { podReplacementPolicy: 'Failed' },
    endedByKubelet: true,
    build: (random) => ({
      containers: ['main', 'proxy'], roles: { main: 'keystone', proxy: 'sidecar' },
      annotations: { [ON_KEYSTONE_EXIT]: 'TerminatePod' },
      script: { containers: { main: { runMs: between(random, 1000, 6000), exitCode: 0 }, proxy: cleanSidecar(random) } },
    }),
  },
  {
    name: 'phase', what: 'completion: phase: app exits 0, the sidecar exits 143 on TERM, the result is the mains\'', expected: 'complete',
    trigger: ['app'], mains: ['app'], sidecars: ['proxy'], endedByKubelet: true,
    build: (random) => ({
      containers: ['app', 'proxy'], roles: { proxy: 'sidecar' }, annotations: { [COMPLETION]: 'phase' },
      script: { containers: { app: { runMs: between(random, 1000, 6000), exitCode: 0 }, proxy: { signalExitDelayMs: between(random, 0, 1500) } } },
    }),
  },
  {
    name: 'main-fails', what: 'rule S with a main that exits 1: the Job fails, as it should', expected: 'fail',
    trigger: ['app'], mains: ['app'], sidecars: ['proxy'],
    build: (random) => ({
      containers: ['app', 'proxy'], roles: { proxy: 'sidecar' }, annotations: {},
      script: { containers: { app: { runMs: between(random, 1000, 6000), exitCode: 1 }, proxy: cleanSidecar(random) } },
    }),
  },
  {
    name: 'sidecar-143', what: 'rule S with a sidecar that exits 143 on TERM: the Job fails, as it should', expected: 'fail',
    trigger: ['app'], mains: ['app'], sidecars: ['proxy'],
    build: (random) => ({
      containers: ['app', 'proxy'], roles: { proxy: 'sidecar' }, annotations: {},
      script: { containers: { app: { runMs: between(random, 1000, 6000), exitCode: 0 }, proxy: { signalExitDelayMs: between(random, 0, 1500) } } },
    }),
  },
];

export const GRACE_SECONDS = 20;
export const KIND_LABEL = 'soak.podlife.dev/kind';

export function jobName(kind: JobKind, index: number): string {
  return `soak-${kind.name}-${String(index).padStart(4, '0')}`;
}

/**
 * How a Job's containers are made: for the simulated kubelet, named images and the script in
 * `scriptAnnotation`; for the real node, busybox containers (busybox.ts) recording into `recordDir`.
 */
export type PodFlavour = { scriptAnnotation: string } | { image: string; recordDir: string };

/** The Job a kind stands for. */
export function jobManifest(kind: JobKind, index: number, random: () => number, flavour: PodFlavour): Record<string, unknown> {
  const built = kind.build(random);
  const annotations: Record<string, string> = { ...built.annotations };
  if ('scriptAnnotation' in flavour) annotations[flavour.scriptAnnotation] = JSON.stringify(built.script);
  for (const [container, role] of Object.entries(built.roles)) annotations[roleKey(container)] = role;
  const podSpec = 'scriptAnnotation' in flavour
    ? { containers: built.containers.map((name) => ({ name, image: `soak-${name}:1` })) }
    : {
        containers: built.containers.map((name) => busyboxContainer(name, containerScript(built.script, name), flavour.image)),
        volumes: [recordVolume(flavour.recordDir)],
        enableServiceLinks: false,
      };
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: jobName(kind, index), labels: { [KIND_LABEL]: kind.name } },
    spec: {
      backoffLimit: 0,
      ...kind.jobSpec,
      template: {
        metadata: { labels: { [KIND_LABEL]: kind.name, 'podlife.dev/managed': 'true' }, annotations },
        spec: { restartPolicy: 'Never', terminationGracePeriodSeconds: GRACE_SECONDS, ...podSpec },
      },
    },
  };
}

/** The kind of a Job's pod, from its name (`soak-rule-k-0007-x4k2p`). */
export function kindOfPod(podName: string): { kind: JobKind; job: string } | undefined {
  const m = /^(soak-(.+)-\d{4})-[a-z0-9]{5}$/.exec(podName);
  if (!m) return undefined;
  const kind = JOB_KINDS.find((k) => k.name === m[2]);
  return kind && m[1] ? { kind, job: m[1] } : undefined;
}

