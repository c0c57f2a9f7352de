#!/usr/bin/env node
/**
 * `podlife`: the command-line face of podlife — `explain <pod>`, `explain node <name>`,
 * `explain --unlabelled`, `nodes`, `pods`, `completion bash|zsh`. Installed also as
 * `kubectl-podlife`, so that `kubectl podlife …` runs it as a kubectl plugin (and
 * `kubectl_complete-podlife` completes it); the usage then names it `kubectl podlife`.
 *
 * Exit codes: 0 done, 1 the thing asked about does not exist or the cluster could not be read,
 * 2 a bad command line (one line naming the problem, one naming the help), 130 interrupted.
 */
import { basename } from 'node:path';
import { readFileSync } from 'node:fs';
import { commandUsageFor, parseCommandLine, usageErrorFor, usageFor } from './args.js';
import { clusterLookups } from './complete-lookups.js';
import { complete, completionOutput, completionScript } from './completion.js';
import { runExplain } from './explain.js';
import { runMigrateNrc } from './migrate.js';
import { runExplainNode, runNodes } from './nodes.js';
import { runPods } from './pods.js';
import { terminalText } from './terminal.js';
import { runExplainUnlabelled } from './unlabelled.js';

/** How the user called us: `kubectl podlife` when run as the plugin. */
export function programName(argv1: string | undefined): string {
  const name = basename(argv1 ?? 'podlife').replace(/\.[cm]?[jt]s$/, '');
  return name.startsWith('kubectl-') || name.startsWith('kubectl_complete-') ? 'kubectl podlife' : 'podlife';
}

/** The version in the package's own package.json (two folders up from src/cli and dist/cli). */
export function packageVersion(): string {
  const pkg: unknown = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
  return typeof pkg === 'object' && pkg !== null && 'version' in pkg && typeof pkg.version === 'string' ? pkg.version : 'unknown';
}

async function main(argv: readonly string[]): Promise<number> {
  const prog = programName(process.argv[1]);
  const io = { out: (t: string) => void process.stdout.write(t), err: (t: string) => void process.stderr.write(t), columns: process.stdout.isTTY ? process.stdout.columns : undefined };
  // kubectl runs kubectl_complete-podlife with the words alone; podlife's own scripts say __complete.
  const completing = basename(process.argv[1] ?? '').startsWith('kubectl_complete-') ? [...argv] : argv[0] === '__complete' ? argv.slice(1) : undefined;
  if (completing) {
    io.out(completionOutput(await complete(completing.length > 0 ? completing : [''], clusterLookups())));
    return 0;
  }
  const args = parseCommandLine(argv);
  switch (args.command) {
    case 'help':
      io.out(`${args.topic !== undefined ? commandUsageFor(prog, args.topic) : usageFor(prog)}\n`);
      return 0;
    case 'version':
      io.out(`${packageVersion()}\n`);
      return 0;
    case 'error':
      io.err(`${usageErrorFor(prog, args)}\n`);
      return 2;
    case 'completion':
      io.out(completionScript(args.shell));
      return 0;
    case 'explain-node':
      return runExplainNode(args, io);
    case 'explain-unlabelled':
      return runExplainUnlabelled(args, io);
    case 'nodes':
      return runNodes(args, io);
    case 'pods':
      return runPods(args, io);
    case 'migrate-nrc':
      return runMigrateNrc(args, io);
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
    // An error can quote the API server (its Status message): escaped like all text from the cluster.
    process.stderr.write(`${programName(process.argv[1])}: ${terminalText(err instanceof Error ? err.message : String(err))}\n`);
    process.exitCode = 1;
  },
);
