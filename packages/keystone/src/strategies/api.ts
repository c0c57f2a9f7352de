/**
 * The API surface the actuators need, as small interfaces, plus implementations over
 * `KubeClient` (REST) and client-node's `Exec` (pods/exec over a websocket).
 *
 * Guarantees:
 * - actuators depend only on these interfaces, so unit tests use stubs and a custom
 *   controller can supply its own transport;
 * - `exec` never rejects: a command that could not start, timed out or exited non-zero is an
 *   `ExecResult` with `exitCode` undefined or non-zero and a readable `error`;
 * - captured output is bounded (4 KiB per stream), so a chatty command cannot grow memory;
 * - writes address the pod they were decided on, not whatever now bears its name: with a uid in
 *   the `PodRef`, the delete carries it as a precondition, the ephemeral-container patch as
 *   `metadata.uid` (the API server refuses to change a uid), and `createExecApi` reads the pod
 *   and runs nothing when its uid differs (pods/exec takes no precondition);
 * - `createExecApi` holds each namespace to its share of exec slots (exec-slots.ts).
 */
import { Writable } from 'node:stream';
import { Exec, type KubeConfig, type V1EphemeralContainer, type V1Pod, type V1Status } from '@kubernetes/client-node';
import { ContentType, KubeClient, isNotFound, resourcePath, type JsonPatchOp } from '@podlife/core';
import { DEFAULT_EXEC_SLOTS_PER_NAMESPACE, ExecSlots, limitExecPerNamespace } from './exec-slots.js';

/** A pod by namespace, name and (for preconditions) uid. */
export interface PodRef {
  readonly namespace: string;
  readonly name: string;
  readonly uid?: string;
}

/** How a command run through pods/exec ended. */
export interface ExecResult {
  /** 0 on success; undefined when the command never reported an exit code. */
  readonly exitCode: number | undefined;
  readonly stdout: string;
  readonly stderr: string;
  readonly error?: string;
  /** Nothing was run: the pod's namespace already has its share of exec slots (exec-slots.ts); try again later. */
  readonly deferred?: boolean;
}

/** Runs a command in a container (pods/exec). */
export interface PodExecApi {
  exec(pod: PodRef, container: string, command: readonly string[], signal?: AbortSignal): Promise<ExecResult>;
}

/** The pod writes the actuators make. */
export interface PodApi {
  /** PATCH pods/ephemeralcontainers adding one container (strategic merge by name), to the pod of `pod.uid` only when given. */
  addEphemeralContainer(pod: PodRef, container: V1EphemeralContainer): Promise<void>;
  /** DELETE the pod with a grace period; 'gone' when it no longer exists. */
  deletePod(pod: PodRef, gracePeriodSeconds: number): Promise<'deleted' | 'gone'>;
  /** JSON patch on pods/status; resolves with the pod the server returned (when the transport has it). */
  patchStatus(pod: PodRef, ops: readonly JsonPatchOp[]): Promise<V1Pod | void>;
}

export function podRef(pod: V1Pod): PodRef {
  return { namespace: pod.metadata?.namespace ?? 'default', name: pod.metadata?.name ?? '', uid: pod.metadata?.uid };
}

function podPath(pod: PodRef, subresource?: string): string {
  return resourcePath({ version: 'v1', resource: 'pods', namespace: pod.namespace, name: pod.name, subresource });
}

/**
 * The ephemeral-container patch: with the uid in it, a pod recreated under the same name makes
 * the API server answer 422 (metadata.uid is immutable) instead of taking the container.
 */
export function ephemeralContainerPatch(pod: PodRef, container: V1EphemeralContainer): object {
  return { ...(pod.uid ? { metadata: { uid: pod.uid } } : {}), spec: { ephemeralContainers: [container] } };
}

export function createPodApi(client: KubeClient): PodApi {
  return {
    async addEphemeralContainer(pod, container) {
      await client.patch(podPath(pod, 'ephemeralcontainers'), ephemeralContainerPatch(pod, container), ContentType.StrategicMergePatch);
    },
    async deletePod(pod, gracePeriodSeconds) {
      const body = {
        apiVersion: 'v1',
        kind: 'DeleteOptions',
        gracePeriodSeconds,
        ...(pod.uid ? { preconditions: { uid: pod.uid } } : {}),
      };
      try {
        await client.delete(podPath(pod), body);
        return 'deleted';
      } catch (err) {
        if (isNotFound(err)) return 'gone';
        throw err;
      }
    },
    patchStatus(pod, ops) {
      return client.patch<V1Pod>(podPath(pod, 'status'), ops, ContentType.JsonPatch);
    },
  };
}

const OUTPUT_LIMIT = 4096;

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer | string, _enc: BufferEncoding, done: () => void): void {
    if (this.text.length < OUTPUT_LIMIT) this.text += String(chunk).slice(0, OUTPUT_LIMIT - this.text.length);
    done();
  }
}

/** The exit code a pods/exec status carries: Success is 0, NonZeroExitCode carries it in causes. */
export function exitCodeOf(status: V1Status): number | undefined {
  if (status.status === 'Success') return 0;
  const cause = status.details?.causes?.find((c) => c.reason === 'ExitCode');
  const code = cause?.message !== undefined ? Number(cause.message) : Number.NaN;
  return Number.isInteger(code) ? code : undefined;
}

function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  const message = (err as { message?: unknown } | null)?.message;
  return typeof message === 'string' && message !== '' ? message : String(err);
}

/** Why an exec was cut short, from its signal's reason: a stop's budget says so; anything else is "aborted". */
export function abortText(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  return reason instanceof Error && reason.name !== 'AbortError' ? reason.message : 'aborted';
}

/** How `createExecApi` runs commands. */
export interface ExecApiOptions {
  /** Longest wait for one command's exit status; default 10 s. */
  timeoutMs?: number;
  /** Commands one namespace may have in flight at once; default 16 (exec-slots.ts). */
  perNamespace?: number;
  /** Reads the pod before each command to compare its uid; default a client built from the KubeConfig. */
  client?: KubeClient;
}

/**
 * pods/exec through client-node's websocket `Exec`, each call bounded by `timeoutMs` and its
 * signal, run only when the pod still has the uid of the `PodRef` (when it has one), each
 * namespace held to `perNamespace` calls in flight.
 */
export function createExecApi(kc: KubeConfig, opts: ExecApiOptions = {}): PodExecApi {
  let client: Promise<KubeClient> | undefined = opts.client && Promise.resolve(opts.client);
  const reader = async (pod: PodRef, signal?: AbortSignal) => {
    client ??= KubeClient.fromKubeConfig(kc).catch((err: unknown) => {
      client = undefined; // built again on the next call
      throw err;
    });
    return currentUid(await client, pod, signal);
  };
  return guardExec(websocketExec(kc, opts.timeoutMs ?? 10_000), { readUid: reader, perNamespace: opts.perNamespace });
}

/**
 * What `createExecApi` puts around its transport: each namespace held to its share of exec
 * slots, then the uid check (inside the slot: the read counts against the stop's budget too).
 */
export function guardExec(
  transport: PodExecApi,
  opts: { readUid: (pod: PodRef, signal?: AbortSignal) => Promise<string | undefined>; perNamespace?: number },
): PodExecApi {
  return limitExecPerNamespace(requireSameUid(transport, opts.readUid), new ExecSlots(opts.perNamespace ?? DEFAULT_EXEC_SLOTS_PER_NAMESPACE));
}

/** The uid of the pod that bears `pod`'s name now; undefined when there is none. */
async function currentUid(client: KubeClient, pod: PodRef, signal?: AbortSignal): Promise<string | undefined> {
  try {
    return (await client.get<V1Pod>(podPath(pod), undefined, signal)).metadata?.uid;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/**
 * `api` run only on the pod `PodRef.uid` names: a fresh read first, and nothing run when the name
 * is gone or now belongs to another pod (pods/exec itself takes no precondition). Without a uid
 * in the `PodRef`, the command runs as asked.
 */
export function requireSameUid(api: PodExecApi, readUid: (pod: PodRef, signal?: AbortSignal) => Promise<string | undefined>): PodExecApi {
  const refused = (error: string): ExecResult => ({ exitCode: undefined, stdout: '', stderr: '', error });
  return {
    async exec(pod, container, command, signal) {
      if (!pod.uid) return api.exec(pod, container, command, signal);
      let uid: string | undefined;
      try {
        uid = await readUid(pod, signal);
      } catch (err) {
        return refused(`not run: could not read pod ${pod.namespace}/${pod.name} to check its uid: ${errorText(err)}`);
      }
      if (uid === undefined) return refused(`not run: pod ${pod.namespace}/${pod.name} no longer exists`);
      if (uid !== pod.uid) return refused(`not run: pod ${pod.namespace}/${pod.name} was recreated (uid ${uid}, not ${pod.uid})`);
      return api.exec(pod, container, command, signal);
    },
  };
}

/** pods/exec through client-node's websocket `Exec`, each call bounded by `timeoutMs` and by its signal. */
function websocketExec(kc: KubeConfig, timeoutMs: number): PodExecApi {
  const exec = new Exec(kc);
  return {
    exec(pod, container, command, signal) {
      return new Promise<ExecResult>((resolve) => {
        const stdout = new Capture();
        const stderr = new Capture();
        let socket: { close(): void } | undefined;
        let settled = false;
        const finish = (exitCode: number | undefined, error?: string) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          try {
            socket?.close();
          } catch {
            // already closed
          }
          resolve({ exitCode, stdout: stdout.text, stderr: stderr.text, ...(error !== undefined ? { error } : {}) });
        };
        const onAbort = () => finish(undefined, abortText(signal as AbortSignal));
        const timer = setTimeout(() => finish(undefined, `no exit status within ${timeoutMs} ms`), timeoutMs);
        if (signal?.aborted) return onAbort();
        signal?.addEventListener('abort', onAbort, { once: true });
        exec
          .exec(pod.namespace, pod.name, container, [...command], stdout, stderr, null, false, (status) => {
            const code = exitCodeOf(status);
            finish(code, code === 0 ? undefined : status.message ?? status.reason ?? 'command failed');
          })
          .then((ws) => {
            socket = ws;
            if (settled) ws.close();
            ws.on('close', () => finish(undefined, 'connection closed before an exit status'));
          })
          // A refused upgrade rejects with the WebSocket's ErrorEvent (not an Error), whose message
          // carries the status ("Unexpected server response: 403").
          .catch((err: unknown) => finish(undefined, errorText(err)));
      });
    },
  };
}
