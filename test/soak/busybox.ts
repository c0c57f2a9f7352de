/**
 * The soak's simulated container scripts (test/support/kubelet-script.ts) as busybox containers
 * for the real node: a container that runs for `runMs` sleeps and exits with `exitCode`; every
 * container traps TERM, waits `signalExitDelayMs` and exits with its `exitOnSignal.TERM` (143 when
 * the script names none, as a simulated one does).
 *
 * Guarantees: pure; every container runs as CONTAINER_UID (not root); PID 1 is the shell and
 * catches TERM (so a stop sent from inside the PID namespace reaches it, and its `SigCgt` says
 * so); each container appends what happened to it,
 * on the host's `/proc/uptime` clock (10 ms), to its own file under the soak's record folder,
 * one line each: `<uptime> TERM` for each TERM received (a second TERM during the delay is
 * recorded too), `<uptime> exit <code>` just before it exits on its own or after a TERM. KILL
 * cannot be recorded from inside; its exit code 137 tells it.
 */
import type { V1Container, V1Volume } from '@kubernetes/client-node';
import type { ContainerScript } from '@podlife/testbed';

/** Where the record folder is mounted in every container. */
export const RECORD_MOUNT = '/soak-record';
const RECORD_VOLUME = 'soak-record';
const UID_ENV = 'POD_UID';
/**
 * The user every container runs as: not root, as restricted pods run, and declared, so that an
 * ephemeral stop container (non-root, no capabilities) can match it and signal its PID 1.
 */
export const CONTAINER_UID = 1000;
/** Longer than any soak: a container without `runMs` runs until a signal ends it. */
const FOREVER_S = 86_400;

/** The record file of one container, relative to the record folder. */
export function recordFileName(podUid: string, container: string): string {
  return `${podUid}.${container}`;
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(3);
}

/** The shell script a container script becomes; names and numbers only, nothing quoted from input. */
export function busyboxScript(container: string, script: ContainerScript): string {
  if (!/^[a-z][a-z0-9-]*$/.test(container)) throw new Error(`container name ${JSON.stringify(container)} is not a DNS label`);
  const onTerm = script.exitOnSignal?.TERM;
  if (onTerm === null) throw new Error(`container ${container}: a busybox soak container cannot ignore TERM`);
  const termExit = onTerm ?? 143;
  const delay = script.signalExitDelayMs ?? 0;
  const lines = [
    `rec() { read -r up idle < /proc/uptime; echo "$up $1" >> ${RECORD_MOUNT}/$${UID_ENV}.${container}; }`,
    // `sleep & wait` rather than `sleep`: a trap runs at once during `wait`, only after a foreground command.
    `onterm() { rec TERM; ${delay > 0 ? `sleep ${seconds(delay)} & wait $!; ` : ''}rec "exit ${termExit}"; exit ${termExit}; }`,
    'trap onterm TERM',
  ];
  if (script.runMs === undefined) lines.push(`sleep ${FOREVER_S} & wait $!`);
  else lines.push(`sleep ${seconds(script.runMs)} & wait $!`, `rec "exit ${script.exitCode ?? 0}"`, `exit ${script.exitCode ?? 0}`);
  return lines.join('\n');
}

export function busyboxContainer(name: string, script: ContainerScript, image: string): V1Container {
  return {
    name,
    image,
    imagePullPolicy: 'Never',
    command: ['sh', '-c', busyboxScript(name, script)],
    env: [{ name: UID_ENV, valueFrom: { fieldRef: { fieldPath: 'metadata.uid' } } }],
    volumeMounts: [{ name: RECORD_VOLUME, mountPath: RECORD_MOUNT }],
    securityContext: { runAsUser: CONTAINER_UID, runAsGroup: CONTAINER_UID, runAsNonRoot: true, allowPrivilegeEscalation: false },
  };
}

/** The host folder the containers record into (the node runs on this host); it must be writable by CONTAINER_UID. */
export function recordVolume(hostDir: string): V1Volume {
  return { name: RECORD_VOLUME, hostPath: { path: hostDir, type: 'Directory' } };
}
