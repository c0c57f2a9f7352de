// Types for node-assets.mjs, so that the TypeScript harness can import it.
export declare const IMAGES: { pause: string; busybox: string; distroless: string; quitserver: string };
export type ImageKey = keyof typeof IMAGES;
export interface NodeAssets {
  binDir: string;
  kubelet: string;
  containerd: string;
  ctr: string;
  runc: string;
  cniBinDir: string;
  images: Record<ImageKey, { ref: string; tar: string }>;
}
export declare function ensureHostPackages(log: (line: string) => void): void;
export declare function ensureNodeAssets(opts?: { log?: (line: string) => void; kubernetes?: string }): Promise<NodeAssets>;
