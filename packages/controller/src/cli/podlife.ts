#!/usr/bin/env node
/** `podlife`: the command-line face of podlife (today: `podlife explain <pod>`). */
import { parseCommandLine, usage } from './args.js';
import { runExplain } from './explain.js';

async function main(argv: readonly string[]): Promise<number> {
  const args = parseCommandLine(argv);
  if (args.command === 'help') {
    process.stdout.write(`${usage}\n`);
    return 0;
  }
  if (args.command === 'error') {
    process.stderr.write(`podlife: ${args.message}\n\n${usage}\n`);
    return 2;
  }
  const abort = new AbortController();
  process.once('SIGINT', () => abort.abort());
  const out = { write: (t: string) => void process.stdout.write(t), isTTY: process.stdout.isTTY === true, columns: process.stdout.columns };
  return runExplain(args, out, abort.signal);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`podlife: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
