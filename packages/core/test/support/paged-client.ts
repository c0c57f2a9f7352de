// A KubeClient stand-in that serves list pages as the API server does: each answer a byte stream,
// written in small chunks, so the transport under test reads it as it would read a socket.
import { Readable } from 'node:stream';
import type { KubeClient, Query, RequestOptions } from '../../src/client.js';

/** What one request is answered with: a list body (as an object or as raw text), or an error thrown before any byte. */
export type PageAnswer = Record<string, unknown> | string | Error | AsyncIterable<Buffer | string>;

/** A client whose `stream` answers each request with `answer(query, signal)`, in chunks of `chunkBytes`. */
export function pagedClient(answer: (query: Query, signal: AbortSignal | undefined) => PageAnswer | Promise<PageAnswer>, chunkBytes = 7): { client: KubeClient; asked: Query[] } {
  const asked: Query[] = [];
  const client = {
    stream: async (req: RequestOptions) => {
      asked.push({ ...req.query });
      const got = await answer(req.query ?? {}, req.signal);
      if (got instanceof Error) throw got;
      if (typeof got === 'object' && Symbol.asyncIterator in got) return Readable.from(got as AsyncIterable<Buffer | string>);
      const bytes = Buffer.from(typeof got === 'string' ? got : JSON.stringify(got));
      const chunks: Buffer[] = [];
      for (let i = 0; i < bytes.length; i += chunkBytes) chunks.push(bytes.subarray(i, i + chunkBytes));
      return Readable.from(chunks);
    },
  } as unknown as KubeClient;
  return { client, asked };
}

/** A watch that sends `lines` (events as JSON) and then nothing until it is aborted. */
export async function* watchLines(signal: AbortSignal | undefined, ...lines: object[]): AsyncGenerator<string> {
  for (const line of lines) yield `${JSON.stringify(line)}\n`;
  await new Promise((resolve) => (signal?.aborted ? resolve(undefined) : signal?.addEventListener('abort', resolve, { once: true })));
}
