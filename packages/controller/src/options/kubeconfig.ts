/**
 * Finding and loading the kubeconfig, for both binaries, the way kubectl looks for it:
 * `--kubeconfig`, else every file in KUBECONFIG, else ~/.kube/config, else the in-cluster
 * service account.
 *
 * Guarantees:
 * - never throws: the result is the KubeConfig or a message a user can act on;
 * - no kubeconfig anywhere says "no kubeconfig found (looked at …)", naming every place tried,
 *   instead of falling back to an http://localhost default that fails later and obscurely;
 * - a malformed file is reported by path and the parser's one-line reason (line and column),
 *   never with the parser's code frame: the file's contents — tokens, client keys — never reach
 *   stderr or a log;
 * - an unknown `--context` names the contexts that exist.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';

export type KubeConfigResult = { readonly ok: true; readonly kc: KubeConfig } | { readonly ok: false; readonly message: string };

export interface KubeConfigSource {
  /** `--kubeconfig`. */
  file?: string;
  /** `--context`. */
  context?: string;
  env?: NodeJS.ProcessEnv;
  home?: string;
}

const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';
const REASON_MAX = 200;

/** The first line of a loader error, clipped: YAML errors put the offending lines after it. */
export function safeReason(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  const first = (text.split('\n', 1)[0] ?? '').trim();
  return first.length <= REASON_MAX ? first : `${first.slice(0, REASON_MAX)}...`;
}

export function loadKubeConfig(source: KubeConfigSource = {}): KubeConfigResult {
  const env = source.env ?? process.env;
  const kc = new KubeConfig();
  const candidates = source.file
    ? [source.file]
    : env.KUBECONFIG
      ? env.KUBECONFIG.split(delimiter).filter((p) => p.length > 0)
      : [join(source.home ?? homedir(), '.kube', 'config')];
  const present = candidates.filter((p) => existsSync(p));
  try {
    if (present.length > 0) {
      // Several files in KUBECONFIG merge as kubectl merges them; each is read by the library.
      for (const [i, path] of present.entries()) {
        if (i === 0) kc.loadFromFile(path);
        else {
          const more = new KubeConfig();
          more.loadFromFile(path);
          kc.mergeConfig(more, true);
        }
      }
    } else if (!source.file && env.KUBERNETES_SERVICE_HOST && existsSync(SERVICE_ACCOUNT_TOKEN)) {
      kc.loadFromCluster();
    } else {
      const where = source.file ? `--kubeconfig ${source.file}` : candidates.join(', ');
      return { ok: false, message: `no kubeconfig found (looked at ${where}${source.file ? '' : ', and for an in-cluster service account'})` };
    }
  } catch (err) {
    return { ok: false, message: `cannot load the kubeconfig (${present.join(', ')}): ${safeReason(err)}` };
  }
  if (source.context !== undefined) {
    if (kc.getContextObject(source.context) === null) {
      const known = kc.getContexts().map((c) => c.name);
      return { ok: false, message: `--context "${source.context}": no such context in the kubeconfig (${known.length > 0 ? `it has ${known.join(', ')}` : 'it has none'})` };
    }
    kc.setCurrentContext(source.context);
  }
  return { ok: true, kc };
}
