// Types for go-tools.mjs, so that the TypeScript suites can import it.
export type GoToolName = 'helm' | 'promtool' | 'kubectl';
export declare function pinnedToolVersion(name: GoToolName): string;
export declare function toolsCacheRoot(): string;
export declare function ensureGoTool(name: GoToolName, opts?: { log?: (line: string) => void }): Promise<{
  path: string;
  version: string;
  source: 'env' | 'cache' | 'built';
}>;
