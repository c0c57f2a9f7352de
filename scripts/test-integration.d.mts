// Types for test-integration.mjs, so that the TypeScript suites can import it.
export declare const INTEGRATION_LIMIT_SECONDS: number;
export declare const DEFAULT_LANES: number;
export declare const SUITE_FOLDERS: Record<'api' | 'node' | 'deploy' | 'soak', string>;
export interface SuiteTag {
  name: string;
  folder: string;
  file: string;
  releases: 'every' | 'newest';
  realNode: boolean;
}
export declare function readSuiteTags(dir?: string): SuiteTag[];
export declare function plan(versions: string[], suites: SuiteTag[], opts?: { full?: boolean; only?: string[] }): { version: string; suites: SuiteTag[] }[];
