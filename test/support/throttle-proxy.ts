/**
 * A loopback TCP proxy in front of the API server that can hold one response mid-stream, so a
 * test injects a fault (a restart, an etcd compaction) at a point of the stream it has seen, not
 * at a moment it guessed.
 *
 * Guarantees:
 * - bytes pass through unchanged (TLS is end to end: the client still verifies the API server's
 *   certificate, issued for 127.0.0.1, and presents its own);
 * - the first connection on which `holdAfterBytes` server-to-client bytes have been forwarded is
 *   held: the proxy stops reading from the server until `release()`, so the server's writes block
 *   once the loopback socket buffers are full (the proxy's receive buffer grows to
 *   net.ipv4.tcp_rmem's maximum, the server's send buffer to tcp_wmem's) — a response larger than
 *   those buffers cannot be finished by the server while held;
 * - `held` resolves once that connection is held; later connections are never held;
 * - while held, the server's end of that connection closing or failing reaches the client only
 *   after `release()` (a close after whatever the server sent before it; a failure at once);
 * - `close()` destroys every connection and stops listening.
 */
import net from 'node:net';

export interface HoldingProxy {
  /** The proxy's URL, with the scheme of the target (e.g. `https://127.0.0.1:40123`). */
  readonly url: string;
  /** Resolves once a connection is held, with the server-to-client bytes it forwarded. */
  readonly held: Promise<number>;
  /** Lets the held connection flow again (no-op if none is held). */
  release(): void;
  close(): Promise<void>;
}

export interface HoldingProxyOptions {
  /** Hold the first connection once this many server-to-client bytes have been forwarded on it. */
  holdAfterBytes: number;
}

export async function startHoldingProxy(target: string, opts: HoldingProxyOptions): Promise<HoldingProxy> {
  const targetUrl = new URL(target);
  const host = targetUrl.hostname;
  const port = Number(targetUrl.port);
  const sockets = new Set<net.Socket>();
  let armed = true;
  let releaseHeld: (() => void) | undefined;
  let released = false;
  let onHeld: (bytes: number) => void = () => undefined;
  const held = new Promise<number>((resolve) => (onHeld = resolve));

  const server = net.createServer((client) => {
    const upstream = net.connect({ host, port });
    sockets.add(client);
    sockets.add(upstream);
    client.on('close', () => sockets.delete(client));
    upstream.on('close', () => sockets.delete(upstream));
    let forwarded = 0;
    let gated = false;
    let draining = false;
    // What the server's side did while the connection was held, replayed on release.
    let deferred: (() => void) | undefined;
    const resume = (): void => {
      if (!gated && !draining && !upstream.destroyed) upstream.resume();
    };
    upstream.on('data', (chunk: Buffer) => {
      forwarded += chunk.length;
      if (!client.write(chunk)) {
        draining = true;
        upstream.pause();
        client.once('drain', () => {
          draining = false;
          resume();
        });
      }
      if (armed && forwarded >= opts.holdAfterBytes) {
        armed = false;
        gated = true;
        upstream.pause();
        releaseHeld = () => {
          gated = false;
          const pending = deferred;
          deferred = undefined;
          if (pending) pending();
          else resume();
        };
        if (released) releaseHeld();
        onHeld(forwarded);
      }
    });
    const onServerGone = (err?: Error): void => {
      const finish = (): void => {
        if (err) client.destroy();
        else client.end();
      };
      if (gated) deferred = finish;
      else finish();
    };
    upstream.on('end', () => onServerGone());
    upstream.on('error', (err) => {
      onServerGone(err);
    });
    client.pipe(upstream);
    client.on('error', () => upstream.destroy());
    client.on('close', () => upstream.destroy());
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address() as net.AddressInfo;

  return {
    url: `${targetUrl.protocol}//127.0.0.1:${address.port}`,
    held,
    release(): void {
      released = true;
      releaseHeld?.();
    },
    async close(): Promise<void> {
      released = true;
      releaseHeld?.();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
