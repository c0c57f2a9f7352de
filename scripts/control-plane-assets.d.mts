// Types for control-plane-assets.mjs, so that the TypeScript harness can import it.
export declare const BINARIES: readonly string[];
export interface PinnedVersions { kubernetes: string; etcd: string }
export declare function pinnedVersions(): PinnedVersions;
export declare function cacheRoot(): string;
export declare function ensureControlPlaneAssets(opts?: { log?: (line: string) => void }): Promise<{
  dir: string;
  source: 'env' | 'cache' | 'built';
  versions: PinnedVersions;
}>;
