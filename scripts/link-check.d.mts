// Types for link-check.mjs, so that the TypeScript suites can import it.
export declare function markdownFiles(dir?: string): string[];
export declare function proseLines(text: string): string[];
export declare function slug(heading: string): string;
export declare function anchorsOf(text: string): Set<string>;
export declare function linksOf(text: string): { line: number; target: string }[];
export declare function checkFile(file: string, packed?: { shipped?: ReadonlySet<string>; pkgRoot?: string }): string[];
export declare function packages(): { name: string; root: string; shipped: Set<string> }[];
