/** An in-memory pods/status endpoint with the API server's behaviour for condition patches. */
import type { V1Pod, V1PodCondition } from '@kubernetes/client-node';
import { ApiError } from '@podlife/core';
import type { PodStatusClient } from '../src/index.js';

export class FakePodApi implements PodStatusClient {
  pod: V1Pod | undefined;
  patches: unknown[] = [];
  gets = 0;
  /** Called before each patch is applied: lets a test change the pod "concurrently". */
  beforePatch: (() => void) | undefined;

  constructor(pod: V1Pod) {
    this.pod = structuredClone({ ...pod, metadata: { ...pod.metadata, resourceVersion: '1' } });
  }

  /** Another writer (the kubelet) changes a condition, as a merge by type. */
  writeCondition(c: V1PodCondition): void {
    this.apply([c]);
  }

  async get<T>(): Promise<T> {
    this.gets++;
    if (!this.pod) throw new ApiError(404, 'NotFound', 'not found', undefined);
    return structuredClone(this.pod) as T;
  }

  async patch<T>(_path: string, body: unknown): Promise<T> {
    this.beforePatch?.();
    this.patches.push(structuredClone(body));
    if (!this.pod) throw new ApiError(404, 'NotFound', 'not found', undefined);
    const b = body as { metadata?: { resourceVersion?: string }; status?: { conditions?: V1PodCondition[] } };
    const rv = b.metadata?.resourceVersion;
    if (rv !== undefined && rv !== this.pod.metadata?.resourceVersion) {
      throw new ApiError(409, 'Conflict', 'the object has been modified', undefined);
    }
    this.apply(JSON.parse(JSON.stringify(b.status?.conditions ?? [])) as V1PodCondition[]);
    return structuredClone(this.pod) as T;
  }

  private apply(conditions: V1PodCondition[]): void {
    const pod = this.pod!;
    const list = ((pod.status ??= {}).conditions ??= []);
    for (const c of conditions) {
      const i = list.findIndex((x) => x.type === c.type);
      // Strategic merge: fields left out are kept, fields sent as null are removed.
      const merged: Record<string, unknown> = i >= 0 ? { ...list[i], ...c } : { ...c };
      for (const [k, v] of Object.entries(merged)) if (v === null) delete merged[k];
      if (i >= 0) list[i] = merged as unknown as V1PodCondition;
      else list.push(merged as unknown as V1PodCondition);
    }
    pod.metadata!.resourceVersion = String(Number(pod.metadata!.resourceVersion) + 1);
  }
}
