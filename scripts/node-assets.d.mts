// Types for node-assets.mjs, so that the TypeScript harness can import it.
export declare const IMAGES: { pause: string; busybox: string; distroless: string; quitserver: string };
export type ImageKey = keyof typeof IMAGES;
export interface NodeAssets {
  binDir: string;
  kubelet: string;
  containerd: string;
  /** containerd-shim-runc-v2 of the same containerd. */
  containerdShim: string;
  ctr: string;
  /** The `version` of containerd's configuration file: 2 for the host's 1.6, 3 for v2. */
  containerdConfigVersion: 2 | 3;
  runc: string;
  cniBinDir: string;
  images: Record<ImageKey, { ref: string; tar: string }>;
}
export declare function ensureHostPackages(log: (line: string) => void): void;
export declare function ensureNodeAssets(opts?: { log?: (line: string) => void; kubernetes?: string; containerd?: 'host' | 'v2' }): Promise<NodeAssets>;
export declare function pinnedContainerdV2(): string;
export declare function ensureContainerdV2(opts?: { log?: (line: string) => void }): Promise<{ version: string; dir: string; containerd: string; shim: string; ctr: string }>;
