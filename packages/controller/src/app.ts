/**
 * The podlife-controller process, assembled from flags and the configuration file: a Manager
 * with the enabled controllers, leader election, health and metrics, and the TLS webhook.
 *
 * Guarantees:
 * - without namespaces listed, keystone never acts in kube-system, kube-node-lease or the
 *   controller's own namespace (docs/adr/0257); listed namespaces are acted in as listed;
 * - controllers act only while this replica leads (with `--leader-elect`); the webhook and the
 *   caches serve on every replica, so a standby answers admission and takes over warm;
 * - `stop()` shuts down in order — webhook (no new admissions), controllers (in-flight
 *   reconciles end), lease released, informers, events flushed — and is idempotent; `done` rejects when leadership is lost, so the process restarts clean.
 */
import os from 'node:os';
import type { KubeConfig, V1Node } from '@kubernetes/client-node';
import { Manager, type KubeClient, type Logger } from '@podlife/core';
import { networkConditionsController } from '@podlife/pod-conditions';
import { nodeReadinessController, type NodeReadinessControllers } from '@podlife/node-readiness';
import type { ControllerConfig } from './options/config-file.js';
import type { ControllerFlags, ControllerName } from './options/flags.js';
import { keystoneController, lifecyclePolicyController, type KeystoneConfig, type KeystoneController, type LifecyclePolicies } from '@podlife/keystone';
import { WebhookServer } from './webhook/server.js';
import { keepKubeletVersion, mutatePodsHandler } from './webhook/mutate-pods.js';
import { mutateNodesHandler } from './webhook/mutate-nodes.js';
import { NODE_WEBHOOK_PATH, nodeRuleSet } from './deploy/node-webhook.js';
import { webhookRequestDuration } from './webhook/metrics.js';
import { SYSTEM_NAMESPACES } from './rbac/rules.js';

/** Flags, configuration, connection, identity and Lease timings of the controller process. */
export interface ControllerAppOptions {
  flags: ControllerFlags;
  config: ControllerConfig;
  client: KubeClient;
  /**
   * For the exec strategy (pods/exec); default: the KubeConfig or connection `client` was built
   * from. `false`: no pods/exec, stops use ephemeral containers only.
   */
  kubeConfig?: KubeConfig | false;
  logger: Logger;
  /** Lease holder identity; default the host name (the pod name in a cluster). */
  identity?: string;
  /** Address the health/metrics and webhook servers bind; default 0.0.0.0 (tests: 127.0.0.1). */
  bindAddress?: string;
  /** Leader election timings (tests shorten them). */
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** Least time a stop stage gets (tests shorten it). */
  minStageMs?: number;
}

/** Controllers this build can run; the others are refused at start with a clear reason. */
const available: ReadonlySet<ControllerName> = new Set(['keystone', 'network-conditions', 'node-readiness']);

/** The podlife-controller process (see the guarantees above): start, stop, done. */
export class ControllerApp {
  readonly manager: Manager;
  readonly keystone: KeystoneController | undefined;
  readonly nodeReadiness: NodeReadinessControllers | undefined;
  /** Lifecycle policies (config `lifecyclePolicies`): the webhook's source and the status controller. */
  readonly policies: LifecyclePolicies | undefined;
  webhook: WebhookServer | undefined;
  private readonly opts: ControllerAppOptions;
  private readonly log: Logger;
  private readonly nodes: (() => V1Node[]) | undefined;

  constructor(opts: ControllerAppOptions) {
    this.opts = opts;
    this.log = opts.logger;
    const { flags, config } = opts;
    const missing = flags.controllers.filter((c) => !available.has(c));
    if (missing.length > 0) {
      throw new Error(`--controllers: ${missing.join(', ')} not available in this build; available: ${[...available].join(', ')}`);
    }
    const namespaces = flags.namespaces.length > 0 ? flags.namespaces : config.namespaces;
    const identity = opts.identity ?? os.hostname();
    this.manager = new Manager({
      client: opts.client,
      logger: opts.logger,
      healthPort: flags.healthPort,
      metricsPort: flags.metricsPort,
      bindAddress: opts.bindAddress ?? '0.0.0.0',
      name: 'podlife.dev/controller',
      ...(flags.leaderElect
        ? {
            leaderElection: {
              namespace: flags.leaderElectionNamespace,
              name: flags.leaderElectionId,
              identity,
              leaseDurationMs: opts.leaseDurationMs,
              renewDeadlineMs: opts.renewDeadlineMs,
              retryPeriodMs: opts.retryPeriodMs,
            },
          }
        : {}),
    });
    const managedPodsOnly = flags.managedPodsOnly === true || config.managedPodsOnly === true;
    // The Manager shares an informer only between callers with the same transform, so each
    // controller gets the fields it asked for (keystone's pod cache is the slim one).
    if (flags.controllers.includes('keystone')) {
      this.keystone = keystoneController(this.manager, {
        config: { ...keystoneConfig(config, namespaces, opts.minStageMs), excludedNamespaces: excludedNamespaces(namespaces, flags.leaderElectionNamespace) },
        dryRun: flags.dryRun,
        managedPodsOnly,
        logger: opts.logger.child({ controller: 'keystone' }),
        ...(opts.kubeConfig === false ? { exec: false as const } : { kubeConfig: opts.kubeConfig }),
      });
    }
    if (flags.controllers.includes('keystone') && config.lifecyclePolicies === true) {
      this.policies = lifecyclePolicyController(this.manager, { execCommands: config.execCommands, logger: opts.logger.child({ controller: 'lifecycle-policies' }) });
    }
    if (flags.controllers.includes('network-conditions')) {
      if (flags.dryRun) this.log.warn('--dry-run does not apply to network-conditions, which only writes conditions of pods that ask for them');
      if (managedPodsOnly) {
        // Its pods are chosen by their readiness gates, which podlife's label knows nothing of.
        this.log.warn(
          'managed pods only narrows keystone\'s pod cache: network-conditions still lists and watches every pod; leave it out of --controllers to cache only labelled pods',
        );
      }
      for (const namespace of namespaces.length > 0 ? namespaces : [undefined]) {
        networkConditionsController(this.manager, namespace ? { namespace } : {});
      }
    }
    if (flags.controllers.includes('node-readiness')) {
      // Its own guardrails (rule dryRun, circuit breaker) govern it; --dry-run is per rule there.
      this.nodeReadiness = nodeReadinessController(this.manager, {
        logger: opts.logger.child({ controller: 'node-readiness' }),
        ...(config.nodeReadinessClusterGuardrails ? { clusterGuardrails: config.nodeReadinessClusterGuardrails } : {}),
      });
    }
    if (flags.webhookPort !== undefined) {
      const informer = this.manager.informer<V1Node>({ path: '/api/v1/nodes', transform: keepKubeletVersion, name: 'nodes' });
      // One array until a node changes: the webhook's answers about the list are kept per array
      // (keystone's node-features), so an admission does not walk every node (docs/adr/0182).
      let list: V1Node[] | undefined;
      const changed = (): void => {
        list = undefined;
      };
      for (const event of ['add', 'update', 'delete'] as const) informer.on(event, changed);
      this.nodes = () => (list ??= informer.store.list());
    }
  }

  /** Starts serving; resolves once caches synced and the webhook listens (controllers wait for the lease). */
  async start(): Promise<void> {
    const { flags, config } = this.opts;
    await this.manager.start();
    if (flags.webhookPort !== undefined && flags.tlsCertFile && flags.tlsKeyFile && this.nodes) {
      const duration = webhookRequestDuration(this.manager.registry);
      this.webhook = new WebhookServer({
        certFile: flags.tlsCertFile,
        keyFile: flags.tlsKeyFile,
        port: flags.webhookPort,
        host: this.opts.bindAddress ?? '0.0.0.0',
        routes: {
          '/mutate-pods': mutatePodsHandler(
            this.nodes,
            { keystoneLimit: config.keystoneLimit, execCommands: config.execCommands, stopSignals: config.containerStopSignals === true },
            this.policies?.source,
          ),
          // Node CREATE (opt-in by its webhook entry, deploy/node-webhook.yaml): readiness taints at birth.
          ...(this.nodeReadiness ? { [NODE_WEBHOOK_PATH]: mutateNodesHandler(() => nodeRuleSet(this.nodeReadiness)) } : {}),
        },
        log: this.log.child({ component: 'webhook' }),
        observe: (route, status, seconds) => duration.observe({ route, status: String(status) }, seconds),
      });
      await this.webhook.start();
    }
    this.log.info(
      { controllers: flags.controllers, dryRun: flags.dryRun, leaderElect: flags.leaderElect, webhookPort: this.webhook?.port },
      'podlife-controller started',
    );
  }

  /** Settles when the manager stops: rejects when leadership was lost. */
  get done(): Promise<void> {
    return this.manager.done;
  }

  /** Stops the webhook server and the manager side by side: bounded by the manager's shutdown deadline. */
  async stop(): Promise<void> {
    await Promise.all([this.webhook?.stop(), this.manager.stop()]);
  }
}

/**
 * The namespaces the controller never acts in (docs/adr/0257): with no namespaces listed,
 * kube-system, kube-node-lease and its own (`own`, the Lease's, which defaults to the pod's);
 * with a list, none (only listed namespaces are acted in, and the admin chose them).
 */
export function excludedNamespaces(namespaces: readonly string[], own: string): string[] {
  return namespaces.length > 0 ? [] : [...new Set([...SYSTEM_NAMESPACES, own])];
}

/** The keystone controller's settings from the config file: `auto` tries exec, then an ephemeral container. */
export function keystoneConfig(c: ControllerConfig, namespaces: readonly string[], minStageMs?: number): KeystoneConfig {
  return {
    keystoneLimit: c.keystoneLimit,
    execCommands: c.execCommands,
    namespaces,
    strategy: c.defaultStrategy === 'ephemeral' ? 'ephemeral' : 'exec',
    // `exec` means exec only: no ephemeral fallback.
    ...(c.defaultStrategy !== 'exec' && c.ephemeralContainerImage ? { ephemeralImage: c.ephemeralContainerImage } : {}),
    ...(c.ephemeralContainerSecurityContext ? { ephemeralSecurityContext: c.ephemeralContainerSecurityContext } : {}),
    ...(c.ephemeralContainerMatchTargetUser !== undefined ? { ephemeralMatchTargetUser: c.ephemeralContainerMatchTargetUser } : {}),
    ...(minStageMs !== undefined ? { minStageMs } : {}),
    ...(c.containerStopSignals ? { stopSignals: true } : {}),
  };
}
