// Types for controller-image.mjs, so that TypeScript tests can import it.
export declare const DOCKERFILE: string;
export declare const BASE_LOCK: string;
export declare const IMAGE_NAME: string;
export declare const IMAGE_REF: string;
export interface DockerfileRecipe {
  from: { name: string; digest: string };
  copy: { src: string; dest: string };
  workdir?: string;
  user: string;
  expose: string[];
  entrypoint: string[];
}
export declare function parseDockerfile(text: string, file?: string): DockerfileRecipe;
export interface TarEntry {
  name: string;
  type: '0' | '2' | '5';
  mode: number;
  data?: Buffer;
  linkname?: string;
}
export declare function tarOf(entries: TarEntry[]): Buffer;
export declare function ociLayout(opts: { ref: string; layers: Buffer[]; config: Record<string, unknown> }): { tar: Buffer; digest: string; size: number };
export declare function imageCacheDir(): string;
export interface BaseImage {
  ref: string;
  digest: string;
  size: number;
  tar: string;
  layer: string;
  config: Record<string, unknown>;
}
export declare function ensureBaseImage(opts?: { log?: (line: string) => void; cacheDir?: string }): BaseImage;
export interface ControllerImage {
  ref: string;
  digest: string;
  tar: string;
  size: number;
  base: { ref: string; digest: string; size: number };
}
export declare function ensureControllerImage(opts?: { log?: (line: string) => void }): ControllerImage;
