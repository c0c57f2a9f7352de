/**
 * `@podlife/core/testing`: what a unit test of a controller built on podlife needs — an
 * in-memory API server that a real `KubeClient` talks to, and the patch semantics it applies.
 */
export { FakeApiServer, type FakeApiServerOptions, type RecordedRequest, type StoredObject } from './fake-api-server.js';
export { PatchError, applyJsonPatch, applyMergePatch, applyStrategicMergePatch } from './apply-patch.js';
