/**
 * A TLS certificate and key read from disk and kept current.
 *
 * Guarantees:
 * - `load()` returns the pair only when the certificate matches the key; a half-rotated pair
 *   (new certificate, old key — Secret volumes and cert-manager do not swap both atomically
 *   for every consumer) is refused and the previous pair stays in use;
 * - `watch(onChange)` calls back once per real change of content (not per file event), from a
 *   directory watch (Secret volumes replace a symlink, which a file watch would miss) backed
 *   by a slow poll, because file events are not delivered on every file system.
 */
import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { dirname } from 'node:path';

export interface TlsPair {
  cert: Buffer;
  key: Buffer;
  /** The leaf certificate's expiry, for logs and metrics. */
  notAfterMs: number;
}

export type TlsLoadResult = { ok: true; pair: TlsPair } | { ok: false; reason: string };

export async function loadTlsPair(certFile: string, keyFile: string): Promise<TlsLoadResult> {
  let cert: Buffer;
  let key: Buffer;
  try {
    [cert, key] = await Promise.all([readFile(certFile), readFile(keyFile)]);
  } catch (err) {
    return { ok: false, reason: `cannot read certificate or key: ${(err as Error).message}` };
  }
  try {
    const x509 = new X509Certificate(cert);
    if (!x509.checkPrivateKey(createPrivateKey(key))) {
      return { ok: false, reason: `the key in ${keyFile} does not match the certificate in ${certFile}` };
    }
    return { ok: true, pair: { cert, key, notAfterMs: Date.parse(x509.validTo) } };
  } catch (err) {
    return { ok: false, reason: `invalid PEM in ${certFile} or ${keyFile}: ${(err as Error).message}` };
  }
}

export interface TlsWatchOptions {
  certFile: string;
  keyFile: string;
  /** Poll period as a fallback to file events; default 10 s. */
  pollMs?: number;
  /** Wait after a file event before reading, so a writer can finish both files; default 100 ms. */
  settleMs?: number;
  onChange(pair: TlsPair): void;
  onError(reason: string): void;
}

/** Watches a certificate/key pair; `current` is the last good pair. */
export class TlsFiles {
  current: TlsPair | undefined;
  private readonly opts: TlsWatchOptions;
  private watchers: FSWatcher[] = [];
  private poll: NodeJS.Timeout | undefined;
  private settle: NodeJS.Timeout | undefined;
  private lastError: string | undefined;
  private reloading: Promise<void> = Promise.resolve();

  constructor(opts: TlsWatchOptions) {
    this.opts = opts;
  }

  /** Loads the pair once; rejects with the reason when it is unusable (so start-up fails loudly). */
  async load(): Promise<TlsPair> {
    const res = await loadTlsPair(this.opts.certFile, this.opts.keyFile);
    if (!res.ok) throw new Error(res.reason);
    this.current = res.pair;
    return res.pair;
  }

  start(): void {
    const dirs = new Set([dirname(this.opts.certFile), dirname(this.opts.keyFile)]);
    for (const dir of dirs) {
      try {
        const w = watch(dir, { persistent: false }, () => this.scheduleReload());
        w.on('error', () => undefined);
        this.watchers.push(w);
      } catch {
        // No file events here: the poll below still picks changes up.
      }
    }
    this.poll = setInterval(() => this.scheduleReload(0), this.opts.pollMs ?? 10_000);
    this.poll.unref();
  }

  stop(): void {
    for (const w of this.watchers) w.close();
    this.watchers = [];
    clearInterval(this.poll);
    clearTimeout(this.settle);
  }

  /** Re-reads the files now; resolves once done (used by tests and by the poll). */
  reload(): Promise<void> {
    this.reloading = this.reloading.then(async () => {
      const res = await loadTlsPair(this.opts.certFile, this.opts.keyFile);
      if (!res.ok) {
        if (res.reason !== this.lastError) this.opts.onError(res.reason);
        this.lastError = res.reason;
        return;
      }
      this.lastError = undefined;
      const cur = this.current;
      if (cur && cur.cert.equals(res.pair.cert) && cur.key.equals(res.pair.key)) return;
      this.current = res.pair;
      this.opts.onChange(res.pair);
    });
    return this.reloading;
  }

  private scheduleReload(delayMs = this.opts.settleMs ?? 100): void {
    clearTimeout(this.settle);
    this.settle = setTimeout(() => void this.reload(), delayMs);
    this.settle.unref();
  }
}
