/**
 * A container's output as it is written, read the way `kubectl logs -f` reads it: pods/log with
 * `follow=true`, served by the kubelet through the API server.
 *
 * Guarantees: each complete line is handed over once, in order; a last line without a newline
 * is handed over when the stream ends; `stop()` ends the request; errors are reported once,
 * through `onError`, and never thrown.
 */
import { lines, type KubeClient } from '@podlife/core';

export interface LogFollower {
  stop(): void;
}

export function followLog(
  client: KubeClient,
  target: { namespace: string; pod: string; container: string },
  onLine: (line: string) => void,
  onError: (message: string) => void,
): LogFollower {
  const abort = new AbortController();
  (async () => {
    const res = await client.stream({
      path: `/api/v1/namespaces/${target.namespace}/pods/${target.pod}/log`,
      query: { container: target.container, follow: 'true' },
      signal: abort.signal,
    });
    for await (const line of lines(res)) onLine(line);
  })().catch((err: unknown) => {
    if (!abort.signal.aborted) onError(err instanceof Error ? err.message : String(err));
  });
  return { stop: () => abort.abort() };
}
