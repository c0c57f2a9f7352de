/**
 * A namespace of its own for each test: a fresh name (`<prefix>-<6 hex>`), created on the API
 * server before the test's objects, so tests sharing one control plane never see each other's
 * pods, Jobs or ConfigMaps. Labels go on at creation (a Pod Security profile must be there before
 * the first pod).
 */
import { randomBytes } from 'node:crypto';
import type { KubeClient } from '@podlife/core';

export async function createNamespace(client: KubeClient, prefix: string, labels?: Record<string, string>): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  await client.create('/api/v1/namespaces', { metadata: { name, ...(labels ? { labels } : {}) } });
  return name;
}
