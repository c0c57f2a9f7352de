/**
 * Flags for a podlife controller run in-process by a test: the keystone controller alone, no
 * leader election, no ports, warn-level logs; `over` changes what a scenario needs.
 */
import type { ControllerFlags } from '@podlife/controller';

export function keystoneFlags(over: Partial<ControllerFlags> = {}): ControllerFlags {
  return {
    controllers: ['keystone'],
    namespaces: [],
    dryRun: false,
    configPath: undefined,
    kubeconfig: undefined,
    context: undefined,
    leaderElect: false,
    leaderElectionNamespace: 'default',
    leaderElectionId: 'podlife-controller',
    webhookPort: undefined,
    tlsCertFile: undefined,
    tlsKeyFile: undefined,
    metricsPort: undefined,
    healthPort: undefined,
    logLevel: 'warn',
    help: false,
    ...over,
  };
}
