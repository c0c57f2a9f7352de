/**
 * Records every version of one pod the API server sends on a watch, so that a test (or the demo)
 * sees each intermediate status, not just whatever a poll happens to catch.
 *
 * Guarantees: versions arrive in resourceVersion order; `onChange` is called for each; the
 * recording ends at `stop()` or when the pod is deleted (`deleted` is then true). A broken watch
 * is resumed from the last version seen.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { lines, resourcePath, type KubeClient } from '@podlife/core';

export interface PodRecording {
  readonly versions: V1Pod[];
  readonly deleted: boolean;
  /** Resolves when the pod is deleted. */
  readonly gone: Promise<void>;
  stop(): void;
}

export function recordPod(client: KubeClient, namespace: string, name: string, onChange?: (pod: V1Pod) => void): PodRecording {
  const versions: V1Pod[] = [];
  const abort = new AbortController();
  let deleted = false;
  let markGone: () => void = () => {};
  const gone = new Promise<void>((resolve) => (markGone = resolve));
  const path = resourcePath({ version: 'v1', resource: 'pods', namespace });

  void (async () => {
    let resourceVersion: string | undefined;
    while (!abort.signal.aborted && !deleted) {
      try {
        const res = await client.stream({
          path, signal: abort.signal,
          query: { watch: 1, fieldSelector: `metadata.name=${name}`, resourceVersion, allowWatchBookmarks: true },
        });
        for await (const line of lines(res)) {
          const event = JSON.parse(line) as { type: string; object: V1Pod };
          if (event.type === 'ERROR') {
            resourceVersion = undefined;
            continue;
          }
          resourceVersion = event.object.metadata?.resourceVersion ?? resourceVersion;
          if (event.type === 'BOOKMARK') continue;
          if (event.type === 'DELETED') {
            deleted = true;
            markGone();
            res.destroy();
            return;
          }
          versions.push(event.object);
          onChange?.(event.object);
        }
      } catch {
        if (abort.signal.aborted) return;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  })();

  return {
    versions,
    get deleted() {
      return deleted;
    },
    gone,
    stop: () => abort.abort(),
  };
}
