#!/usr/bin/env node
/**
 * `podlife-controller`: flags -> configuration -> ControllerApp, with graceful shutdown.
 *
 * Exit codes: 0 after a requested shutdown (SIGTERM/SIGINT), 1 when the controller failed or
 * lost its lease (the Deployment restarts it clean), 2 for a usage or configuration error.
 */
import { readFile } from 'node:fs/promises';
import { KubeClient, createLogger } from '@podlife/core';
import { ControllerApp } from './app.js';
import { defaultConfig, formatProblems, parseConfig, type ControllerConfig } from './options/config-file.js';
import { parseFlags, usage } from './options/flags.js';
import { loadKubeConfig } from './options/kubeconfig.js';

async function loadConfig(path: string | undefined): Promise<ControllerConfig | string> {
  if (!path) return { ...defaultConfig, execCommands: {}, namespaces: [] };
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    return `--config: cannot read ${path}: ${(err as Error).message}`;
  }
  const result = parseConfig(text);
  return result.ok ? result.config : `--config ${path}:\n${formatProblems(result.problems).replace(/^/gm, '  ')}`;
}

export async function main(argv: readonly string[]): Promise<number> {
  const parsed = parseFlags(argv, process.env);
  if (!parsed.ok) {
    process.stderr.write(`${parsed.problems.join('\n')}\n\nrun podlife-controller --help for the flags\n`);
    return 2;
  }
  const flags = parsed.flags;
  if (flags.help) {
    process.stdout.write(usage);
    return 0;
  }
  const config = await loadConfig(flags.configPath);
  if (typeof config === 'string') {
    process.stderr.write(`${config}\n`);
    return 2;
  }
  const loaded = loadKubeConfig({ file: flags.kubeconfig, context: flags.context });
  if (!loaded.ok) {
    process.stderr.write(`podlife-controller: ${loaded.message}\n`);
    return 2;
  }
  const kc = loaded.kc;
  const logger = createLogger('podlife-controller', { level: flags.logLevel });
  let app: ControllerApp;
  try {
    const client = await KubeClient.fromKubeConfig(kc);
    app = new ControllerApp({ flags, config, client, kubeConfig: kc, logger, identity: process.env.POD_NAME });
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    return 2;
  }

  return new Promise<number>((resolve) => {
    let stopping = false;
    const shutdown = (code: number) => {
      if (stopping) return;
      stopping = true;
      app.stop().then(
        () => resolve(code),
        (err: unknown) => {
          logger.error({ err }, 'shutdown failed');
          resolve(1);
        },
      );
    };
    const onSignal = (signal: string) => {
      if (stopping) {
        logger.warn({ signal }, 'second signal; exiting without waiting');
        process.exit(1);
      }
      logger.info({ signal }, 'shutting down');
      shutdown(0);
    };
    process.on('SIGTERM', () => onSignal('SIGTERM'));
    process.on('SIGINT', () => onSignal('SIGINT'));
    app.done.catch((err: unknown) => {
      logger.error({ err }, 'controller stopped');
      shutdown(1);
    });
    app.start().catch((err: unknown) => {
      logger.error({ err }, 'start failed');
      shutdown(1);
    });
  });
}

main(process.argv.slice(2)).then((code) => process.exit(code));
