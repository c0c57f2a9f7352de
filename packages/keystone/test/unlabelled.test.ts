import assert from 'node:assert/strict';
import type { V1ObjectMeta } from '@kubernetes/client-node';
import { ApiError, METADATA_LIST, type RequestOptions } from '@podlife/core';
import { describe, it } from 'mocha';
import { listUnlabelledAnnotated } from '../src/index.js';

const annotated = { 'role.podlife.dev/app': 'keystone' };

const meta = (name: string, annotations?: Record<string, string>, labels?: Record<string, string>): { metadata: V1ObjectMeta } => ({
  metadata: { name, namespace: 'ns', ...(annotations ? { annotations } : {}), ...(labels ? { labels } : {}) },
});

async function collect(items: AsyncIterable<{ metadata?: V1ObjectMeta }>): Promise<string[]> {
  const names: string[] = [];
  for await (const item of items) names.push(item.metadata?.name ?? '');
  return names;
}

describe('listUnlabelledAnnotated: the annotated pods a managed-only controller does not see', () => {
  it('asks for metadata only, filtered by the server on the label, page after page until no continue token', async () => {
    const asked: RequestOptions[] = [];
    const pages: Record<string, unknown> = {
      '': { items: [meta('a', annotated)], metadata: { continue: 'p2' } },
      p2: { items: [meta('b', annotated)], metadata: { continue: 'p3' } },
      p3: { items: [meta('c', annotated)], metadata: { continue: '' } },
    };
    const client = { request: async <T>(req: RequestOptions) => (asked.push(req), structuredClone(pages[String(req.query?.continue ?? '')]) as T) };
    assert.deepEqual(await collect(listUnlabelledAnnotated(client, '/api/v1/namespaces/ns/pods', 1)), ['a', 'b', 'c']);
    assert.deepEqual(
      asked.map((r) => [r.path, r.accept, r.query?.labelSelector, r.query?.limit, r.query?.continue]),
      [
        ['/api/v1/namespaces/ns/pods', METADATA_LIST, 'podlife.dev/managed!=true', 1, undefined],
        ['/api/v1/namespaces/ns/pods', METADATA_LIST, 'podlife.dev/managed!=true', 1, 'p2'],
        ['/api/v1/namespaces/ns/pods', METADATA_LIST, 'podlife.dev/managed!=true', 1, 'p3'],
      ],
    );
  });

  it('keeps only the pods with lifecycle annotations and without podlife.dev/managed: "true", whatever the server sends', async () => {
    const page = {
      items: [meta('annotated', annotated), meta('false-label', annotated, { 'podlife.dev/managed': 'false' }), meta('labelled', annotated, { 'podlife.dev/managed': 'true' }), meta('plain'), meta('other', { 'example.com/x': 'y' })],
      metadata: {},
    };
    const client = { request: async <T>() => structuredClone(page) as T };
    assert.deepEqual(await collect(listUnlabelledAnnotated(client, '/api/v1/pods')), ['annotated', 'false-label']);
  });

  it('a failed page ends the list with the API error', async () => {
    const client = {
      request: async (): Promise<never> => {
        throw new ApiError(403, 'Forbidden', 'pods is forbidden: User "u" cannot list resource "pods"', undefined);
      },
    };
    await assert.rejects(collect(listUnlabelledAnnotated(client, '/api/v1/pods')), (err: unknown) => err instanceof ApiError && err.status === 403);
  });
});
