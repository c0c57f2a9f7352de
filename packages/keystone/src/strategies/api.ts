/**
 * The API surface the actuators need, as small interfaces, plus implementations over
 * `KubeClient` (REST) and client-node's `Exec` (pods/exec over a websocket).
 *
 * Guarantees:
 * - actuators depend only on these interfaces, so unit tests use stubs and a custom
 *   controller can supply its own transport;
 * - `exec` never rejects: a command that could not start, timed out or exited non-zero is an
 *   `ExecResult` with `exitCode` undefined or non-zero and a readable `error`;
 * - captured output is bounded (4 KiB per stream), so a chatty command cannot grow memory.
 */
import { Writable } from 'node:stream';
import { Exec, type KubeConfig, type V1EphemeralContainer, type V1Pod, type V1Status } from '@kubernetes/client-node';
import { ContentType, isNotFound, resourcePath, type JsonPatchOp, type KubeClient } from '@podlife/core';

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
}

/** Runs a command in a container (pods/exec). */
export interface PodExecApi {
  exec(pod: PodRef, container: string, command: readonly string[], signal?: AbortSignal): Promise<ExecResult>;
}

/** The pod writes the actuators make. */
export interface PodApi {
  /** PATCH pods/ephemeralcontainers adding one container (strategic merge by name). */
  addEphemeralContainer(pod: PodRef, container: V1EphemeralContainer): Promise<void>;
  /** DELETE the pod with a grace period; 'gone' when it no longer exists. */
  deletePod(pod: PodRef, gracePeriodSeconds: number): Promise<'deleted' | 'gone'>;
  /** JSON patch on pods/status; resolves with the pod the server returned (when the transport has it). */
  patchStatus(pod: PodRef, ops: readonly JsonPatchOp[]): Promise<V1Pod | void>;
}

export function podRef(pod: V1Pod): PodRef {
  return { namespace: pod.metadata?.namespace ?? 'default', name: pod.metadata?.name ?? '', uid: pod.metadata?.uid };
}

export function createPodApi(client: KubeClient): PodApi {
  const path = (pod: PodRef, subresource?: string) =>
    resourcePath({ version: 'v1', resource: 'pods', namespace: pod.namespace, name: pod.name, subresource });
  return {
    async addEphemeralContainer(pod, container) {
      await client.patch(path(pod, 'ephemeralcontainers'), { spec: { ephemeralContainers: [container] } }, ContentType.StrategicMergePatch);
    },
    async deletePod(pod, gracePeriodSeconds) {
      const body = {
        apiVersion: 'v1',
        kind: 'DeleteOptions',
        gracePeriodSeconds,
        ...(pod.uid ? { preconditions: { uid: pod.uid } } : {}),
      };
      try {
        await client.delete(path(pod), body);
        return 'deleted';
      } catch (err) {
        if (isNotFound(err)) return 'gone';
        throw err;
      }
    },
    patchStatus(pod, ops) {
      return client.patch<V1Pod>(path(pod, 'status'), ops, ContentType.JsonPatch);
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

/** pods/exec through client-node's websocket `Exec`, each call bounded by `timeoutMs` (default 10 s). */
export function createExecApi(kc: KubeConfig, opts: { timeoutMs?: number } = {}): PodExecApi {
  const exec = new Exec(kc);
  const timeoutMs = opts.timeoutMs ?? 10_000;
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
        const onAbort = () => finish(undefined, 'aborted');
        const timer = setTimeout(() => finish(undefined, `no exit status within ${timeoutMs} ms`), timeoutMs);
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
