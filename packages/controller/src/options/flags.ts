/**
 * Command-line flags of `podlife-controller`.
 *
 * Guarantees: `parseFlags` never throws and never exits; it returns the options or the problems,
 * each naming the flag. Unknown flags and positional arguments are problems (a misspelt
 * `--dry-run` must not turn into a controller that acts).
 */
import { parseArgs } from 'node:util';
import { namespaceProblem } from './config-file.js';

export const controllerNames = ['keystone', 'network-conditions', 'node-readiness'] as const;
export type ControllerName = (typeof controllerNames)[number];

export interface ControllerFlags {
  controllers: ControllerName[];
  /** Namespaces given on the command line (repeatable flag); empty means "from the config file, else all". */
  namespaces: string[];
  dryRun: boolean;
  /** List and watch only pods labelled podlife.dev/managed=true; false: as the config file says. */
  managedPodsOnly?: boolean;
  configPath: string | undefined;
  kubeconfig: string | undefined;
  context: string | undefined;
  leaderElect: boolean;
  leaderElectionNamespace: string;
  leaderElectionId: string;
  /** Port of the TLS webhook server; undefined when the webhook is off. */
  webhookPort: number | undefined;
  tlsCertFile: string | undefined;
  tlsKeyFile: string | undefined;
  /** undefined when off (flag value 0). */
  metricsPort: number | undefined;
  healthPort: number | undefined;
  logLevel: string;
  help: boolean;
}

export type FlagsResult = { ok: true; flags: ControllerFlags } | { ok: false; problems: string[] };

export const defaultControllers: readonly ControllerName[] = ['keystone', 'network-conditions'];

export const usage = `Usage: podlife-controller [flags]

  --controllers=LIST          controllers to run, comma-separated: ${controllerNames.join(', ')}
                              (default: ${defaultControllers.join(',')})
  --namespace=NS              act only in this namespace; repeatable (default: the config file's, else all)
  --dry-run                   decide and log, never act
  --managed-pods-only         list and watch only pods labelled podlife.dev/managed=true (default: the
                              config file's managedPodsOnly, else every pod); see docs/adr/0131
  --config=FILE               configuration file (YAML): exec commands, ephemeral image, keystone limit, strategy
  --kubeconfig=FILE           kubeconfig (default: KUBECONFIG, ~/.kube/config, then in-cluster)
  --context=NAME              kubeconfig context
  --leader-elect              run only while holding the leader Lease
  --leader-election-namespace=NS   namespace of the Lease (default: POD_NAMESPACE, else podlife-system)
  --leader-election-id=NAME   name of the Lease (default: podlife-controller)
  --webhook-port=PORT         serve /mutate-pods over TLS on this port (needs --tls-cert-file, --tls-key-file)
  --tls-cert-file=FILE        PEM certificate chain for the webhook, reloaded when it changes
  --tls-key-file=FILE         PEM private key for the webhook, reloaded when it changes
  --metrics-port=PORT         /metrics port (default 8080; 0 turns it off)
  --health-port=PORT          /healthz and /readyz port (default 8081; 0 turns it off)
  --log-level=LEVEL           trace, debug, info, warn, error (default info)
  -h, --help                  this text
`;

const logLevels = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

export function parseFlags(argv: readonly string[], env: Record<string, string | undefined> = {}): FlagsResult {
  let values: Record<string, string | boolean | string[] | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        controllers: { type: 'string' },
        namespace: { type: 'string', multiple: true },
        'dry-run': { type: 'boolean' },
        'managed-pods-only': { type: 'boolean' },
        config: { type: 'string' },
        kubeconfig: { type: 'string' },
        context: { type: 'string' },
        'leader-elect': { type: 'boolean' },
        'leader-election-namespace': { type: 'string' },
        'leader-election-id': { type: 'string' },
        'webhook-port': { type: 'string' },
        'tls-cert-file': { type: 'string' },
        'tls-key-file': { type: 'string' },
        'metrics-port': { type: 'string' },
        'health-port': { type: 'string' },
        'log-level': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    return { ok: false, problems: [(err as Error).message] };
  }
  const problems: string[] = [];
  const str = (k: string): string | undefined => values[k] as string | undefined;

  const controllers: ControllerName[] = [];
  const controllersFlag = str('controllers');
  if (controllersFlag === undefined) controllers.push(...defaultControllers);
  else {
    for (const name of controllersFlag.split(',').map((s) => s.trim()).filter(Boolean)) {
      if (!(controllerNames as readonly string[]).includes(name)) {
        problems.push(`--controllers: unknown controller "${name}"; known: ${controllerNames.join(', ')}`);
      } else if (!controllers.includes(name as ControllerName)) controllers.push(name as ControllerName);
    }
    if (controllers.length === 0 && problems.length === 0) problems.push('--controllers: names at least one controller');
  }

  const namespaces: string[] = [];
  for (const ns of ((values.namespace as string[] | undefined) ?? []).flatMap((v) => v.split(','))) {
    const name = ns.trim();
    const p = namespaceProblem(name);
    if (p) problems.push(`--namespace: ${p}`);
    else if (!namespaces.includes(name)) namespaces.push(name);
  }

  const port = (flag: string, fallback: number | undefined, zeroIsOff: boolean): number | undefined => {
    const v = str(flag);
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!/^\d+$/.test(v) || n > 65535 || (!zeroIsOff && n === 0)) {
      problems.push(`--${flag}: "${v}" is not a port number (${zeroIsOff ? '0' : '1'}-65535)`);
      return fallback;
    }
    return zeroIsOff && n === 0 ? undefined : n;
  };
  const webhookPort = port('webhook-port', undefined, false);
  const metricsPort = port('metrics-port', 8080, true);
  const healthPort = port('health-port', 8081, true);

  const tlsCertFile = str('tls-cert-file');
  const tlsKeyFile = str('tls-key-file');
  if (webhookPort !== undefined && (!tlsCertFile || !tlsKeyFile)) {
    problems.push('--webhook-port: needs --tls-cert-file and --tls-key-file (the webhook serves TLS only)');
  }
  if (webhookPort === undefined && (tlsCertFile || tlsKeyFile)) {
    problems.push('--tls-cert-file/--tls-key-file: given without --webhook-port');
  }

  const logLevel = str('log-level') ?? 'info';
  if (!logLevels.includes(logLevel)) problems.push(`--log-level: "${logLevel}" is not one of ${logLevels.join(', ')}`);

  const leaderElectionNamespace = str('leader-election-namespace') ?? env.POD_NAMESPACE ?? 'podlife-system';
  const nsProblem = namespaceProblem(leaderElectionNamespace);
  if (nsProblem) problems.push(`--leader-election-namespace: ${nsProblem}`);

  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    flags: {
      controllers,
      namespaces,
      dryRun: values['dry-run'] === true,
      managedPodsOnly: values['managed-pods-only'] === true,
      configPath: str('config'),
      kubeconfig: str('kubeconfig'),
      context: str('context'),
      leaderElect: values['leader-elect'] === true,
      leaderElectionNamespace,
      leaderElectionId: str('leader-election-id') ?? 'podlife-controller',
      webhookPort,
      tlsCertFile,
      tlsKeyFile,
      metricsPort,
      healthPort,
      logLevel,
      help: values.help === true,
    },
  };
}
