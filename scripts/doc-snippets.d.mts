// Types for doc-snippets.mjs, so that the TypeScript suites can import it.
export interface SnippetDirectives {
  run: boolean;
  file: string | undefined;
  skip: string | undefined;
}
export interface Block {
  lang: string;
  code: string;
  /** The Markdown line of the block's first line of code. */
  line: number;
  marker: SnippetDirectives;
}
export declare function documents(): string[];
export declare function blocksOf(text: string, doc?: string): { blocks: Block[]; problems: string[] };
export declare function parseMarker(text: string | undefined, where: string): { directives: SnippetDirectives; problems: string[] };
