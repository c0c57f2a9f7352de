/**
 * podlife's annotation keys as a user writes them on a pod (DESIGN 2). Spelled out here rather
 * than taken from the packages' constants on purpose: a suite built on these fails when a package
 * renames a key that users' manifests carry, instead of following the rename.
 */

/** What `role.podlife.dev/<container>` says of a container. */
export type Role = 'keystone' | 'sidecar';

/** `role.podlife.dev/<container>`: keystone or sidecar. */
export const roleKey = (container: string): string => `role.podlife.dev/${container}`;

/** `stop.podlife.dev/<container>`: how a container is stopped (`signal:USR1`, `preset:istio`, …). */
export const stopKey = (container: string): string => `stop.podlife.dev/${container}`;

/** `native.podlife.dev/<container>`: what podlife's webhook made native in a container (written by podlife). */
export const nativeKey = (container: string): string => `native.podlife.dev/${container}`;

/** The pod's `podlife.dev/on-keystone-exit`: StopContainers, TerminatePod or RestartPod. */
export const ON_KEYSTONE_EXIT = 'podlife.dev/on-keystone-exit';

/** The pod's `podlife.dev/native-sidecars`: auto, true or false. */
export const NATIVE_SIDECARS = 'podlife.dev/native-sidecars';

/** The pod's `podlife.dev/completion`: containers or phase. */
export const COMPLETION = 'podlife.dev/completion';

/** The role annotations of a pod: `{ proxy: 'sidecar' }` -> `{ 'role.podlife.dev/proxy': 'sidecar' }`. */
export function roleAnnotations(roles: Record<string, Role>): Record<string, string> {
  return Object.fromEntries(Object.entries(roles).map(([container, role]) => [roleKey(container), role]));
}
