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
/** The controllers `--controllers` can name. */
export type ControllerName = (typeof controllerNames)[number];

/** podlife-controller's flags, parsed and checked. */
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

/** The flags, or every problem found in them. */
export type FlagsResult = { ok: true; flags: ControllerFlags } | { ok: false; problems: string[] };

export const defaultControllers: readonly ControllerName[] = ['keystone', 'network-conditions'];

export const usage = `Usage: podlife-controller [flags]

  --controllers=LIST          controllers to run, comma-separated: ${controllerNames.join(', ')}
                              (default: ${defaultControllers.join(',')})
  --namespace=NS              act only in this namespace; repeatable (default: the config file's, else all)
  --dry-run                   decide and log, never act
  --managed-pods-only         list and watch only pods labelled podlife.dev/managed=true (default: the
                              config file's managedPodsOnly, else every pod); see docs/adr/0131
  --config=FILE               configuration file (YAML): exec commands, ephemeral image, keystone limit, strategy,
                              namespaces, node-readiness guardrails
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

const flagOptions = {
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
} as const;

type FlagName = keyof typeof flagOptions;
type FlagValues = Partial<Record<FlagName, string | boolean | string[]>>;

/** Reads typed flag values and collects problems, each naming its flag. */
class FlagReader {
  readonly problems: string[] = [];
  constructor(private readonly values: FlagValues) {}

  string(flag: FlagName): string | undefined {
    return this.values[flag] as string | undefined;
  }
  strings(flag: FlagName): string[] {
    return (this.values[flag] as string[] | undefined) ?? [];
  }
  bool(flag: FlagName): boolean {
    return this.values[flag] === true;
  }
  problem(flag: string, message: string): void {
    this.problems.push(`--${flag}: ${message}`);
  }
  /** A port number; `fallback` when absent or bad; with `zeroIsOff`, 0 turns the server off (undefined). */
  port(flag: FlagName, fallback: number | undefined, zeroIsOff: boolean): number | undefined {
    const v = this.string(flag);
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!/^\d+$/.test(v) || n > 65535 || (!zeroIsOff && n === 0)) {
      this.problem(flag, `"${v}" is not a port number (${zeroIsOff ? '0' : '1'}-65535)`);
      return fallback;
    }
    return zeroIsOff && n === 0 ? undefined : n;
  }
}

/** `--controllers`: known names, each once; the defaults when absent. */
function readControllers(r: FlagReader): ControllerName[] {
  const flag = r.string('controllers');
  if (flag === undefined) return [...defaultControllers];
  const controllers: ControllerName[] = [];
  let unknown = false;
  for (const name of flag.split(',').map((s) => s.trim()).filter(Boolean)) {
    if (!(controllerNames as readonly string[]).includes(name)) {
      unknown = true;
      r.problem('controllers', `unknown controller "${name}"; known: ${controllerNames.join(', ')}`);
    } else if (!controllers.includes(name as ControllerName)) controllers.push(name as ControllerName);
  }
  if (controllers.length === 0 && !unknown) r.problem('controllers', 'names at least one controller');
  return controllers;
}

/** `--namespace`, repeatable and comma-separated: valid names, each once. */
function readNamespaces(r: FlagReader): string[] {
  const namespaces: string[] = [];
  for (const ns of r.strings('namespace').flatMap((v) => v.split(','))) {
    const name = ns.trim();
    const p = namespaceProblem(name);
    if (p) r.problem('namespace', p);
    else if (!namespaces.includes(name)) namespaces.push(name);
  }
  return namespaces;
}

/** The TLS files go with the webhook port: both or neither. */
function checkWebhookTls(r: FlagReader, webhookPort: number | undefined, certFile: string | undefined, keyFile: string | undefined): void {
  if (webhookPort !== undefined && (!certFile || !keyFile)) {
    r.problem('webhook-port', 'needs --tls-cert-file and --tls-key-file (the webhook serves TLS only)');
  }
  if (webhookPort === undefined && (certFile || keyFile)) {
    r.problems.push('--tls-cert-file/--tls-key-file: given without --webhook-port');
  }
}

function readLogLevel(r: FlagReader): string {
  const logLevel = r.string('log-level') ?? 'info';
  if (!logLevels.includes(logLevel)) r.problem('log-level', `"${logLevel}" is not one of ${logLevels.join(', ')}`);
  return logLevel;
}

/** The Lease's namespace: the flag, else the pod's own namespace, else podlife-system. */
function readLeaderElectionNamespace(r: FlagReader, env: Record<string, string | undefined>): string {
  const namespace = r.string('leader-election-namespace') ?? env.POD_NAMESPACE ?? 'podlife-system';
  const problem = namespaceProblem(namespace);
  if (problem) r.problem('leader-election-namespace', problem);
  return namespace;
}

/** node's parseArgs, strict: unknown flags and positionals are problems, not values. */
function parseArgv(argv: readonly string[]): { ok: true; values: FlagValues } | { ok: false; problems: string[] } {
  try {
    const { values } = parseArgs({ args: [...argv], strict: true, allowPositionals: false, options: flagOptions });
    return { ok: true, values };
  } catch (err) {
    return { ok: false, problems: [(err as Error).message] };
  }
}

/** The controller's flags, or every problem found (each naming its flag); never throws. */
export function parseFlags(argv: readonly string[], env: Record<string, string | undefined> = {}): FlagsResult {
  const parsed = parseArgv(argv);
  if (!parsed.ok) return parsed;
  const r = new FlagReader(parsed.values);
  const controllers = readControllers(r);
  const namespaces = readNamespaces(r);
  const webhookPort = r.port('webhook-port', undefined, false);
  const metricsPort = r.port('metrics-port', 8080, true);
  const healthPort = r.port('health-port', 8081, true);
  const tlsCertFile = r.string('tls-cert-file');
  const tlsKeyFile = r.string('tls-key-file');
  checkWebhookTls(r, webhookPort, tlsCertFile, tlsKeyFile);
  const logLevel = readLogLevel(r);
  const leaderElectionNamespace = readLeaderElectionNamespace(r, env);
  if (r.problems.length > 0) return { ok: false, problems: r.problems };
  return {
    ok: true,
    flags: {
      controllers,
      namespaces,
      dryRun: r.bool('dry-run'),
      managedPodsOnly: r.bool('managed-pods-only'),
      configPath: r.string('config'),
      kubeconfig: r.string('kubeconfig'),
      context: r.string('context'),
      leaderElect: r.bool('leader-elect'),
      leaderElectionNamespace,
      leaderElectionId: r.string('leader-election-id') ?? 'podlife-controller',
      webhookPort,
      tlsCertFile,
      tlsKeyFile,
      metricsPort,
      healthPort,
      logLevel,
      help: r.bool('help'),
    },
  };
}
