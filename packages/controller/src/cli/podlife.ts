#!/usr/bin/env node
/**
 * `podlife`: the command-line face of podlife — `explain <pod>`, `explain node <name>`, `nodes`.
 *
 * Exit codes: 0 done, 1 the thing asked about does not exist or the cluster could not be read,
 * 2 a bad command line (the usage follows the message), 130 interrupted.
 */
import { parseCommandLine, usage } from './args.js';
import { runExplain } from './explain.js';
import { runExplainNode, runNodes } from './nodes.js';

async function main(argv: readonly string[]): Promise<number> {
  const args = parseCommandLine(argv);
  const io = { out: (t: string) => void process.stdout.write(t), err: (t: string) => void process.stderr.write(t) };
  switch (args.command) {
    case 'help':
      io.out(`${usage}\n`);
      return 0;
    case 'error':
      io.err(`podlife: ${args.message}\n\n${usage}\n`);
      return 2;
    case 'explain-node':
      return runExplainNode(args, io);
    case 'nodes':
      return runNodes(args, io);
    case 'explain': {
      const abort = new AbortController();
      process.once('SIGINT', () => abort.abort());
      const out = { write: io.out, isTTY: process.stdout.isTTY === true, columns: process.stdout.columns };
      return runExplain(args, out, abort.signal);
    }
  }
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
