/**
 * The controller's configuration file: the settings only a cluster admin may choose.
 *
 * Guarantees:
 * - `parseConfig` never throws: it returns the configuration or a list of problems, each
 *   naming the offending field by its path (`execCommands.drain[1]`), so an admin can fix
 *   the file without reading code;
 * - unknown fields are problems, not silently ignored (a typo must not weaken a setting);
 * - every field has a default, so an empty file (or none) is a valid configuration.
 *
 * Why these settings live here and not in pod annotations: annotations are written by anyone who
 * can create a pod, so they may only *name* a command (`exec:<name>`) and never choose an image.
 * The file is mounted from a ConfigMap the admin controls.
 */
import type { V1SecurityContext } from '@kubernetes/client-node';
import { dns1123LabelProblem } from '@podlife/core';
import { restrictedStopContext } from '@podlife/keystone';
import { ClusterGuardrailBounds, ClusterGuardrailDefaults, type ClusterGuardrails } from '@podlife/node-readiness';
import { parseDocument } from 'yaml';

/** How sidecars are stopped when the kubelet does not own them. */
export type StopStrategy = 'auto' | 'exec' | 'ephemeral';
export const stopStrategies: readonly StopStrategy[] = ['auto', 'exec', 'ephemeral'];

/** The controller's configuration file, every default applied. */
export interface ControllerConfig {
  /** Named commands for `stop.podlife.dev/<c>: exec:<name>`; each an argv, never a shell line. */
  execCommands: Record<string, string[]>;
  /** Image of the ephemeral container that signals distroless sidecars; undefined disables the strategy. */
  ephemeralContainerImage: string | undefined;
  /**
   * Its securityContext: the file's laid over the restricted-profile default (RESTRICTED_STOP_CONTEXT),
   * anything weaker refused; undefined means that default as it is.
   */
  ephemeralContainerSecurityContext?: V1SecurityContext;
  /** Signal stops run as the target's declared non-root uid (docs/adr/0093); default true. */
  ephemeralContainerMatchTargetUser?: boolean;
  /** Most keystone containers a pod may declare. */
  keystoneLimit: number;
  /** `auto` tries exec, then an ephemeral container when exec is impossible. */
  defaultStrategy: StopStrategy;
  /** Namespaces to act in; empty means every namespace. */
  namespaces: string[];
  /** List and watch only pods labelled `podlife.dev/managed: "true"`; default false. */
  managedPodsOnly?: boolean;
  /**
   * The cluster runs ContainerStopSignals (API servers and kubelets; alpha and off by default
   * through 1.37) with runtimes that honour a container's stop signal: the webhook then converts
   * sidecars whose stop spec is a signal other than TERM, with `lifecycle.stopSignal`. Default false.
   */
  containerStopSignals?: boolean;
  /**
   * Read LifecyclePolicy objects (the CRD deploy/crds/lifecyclepolicies.yaml must be applied):
   * the webhook applies them, the keystone controller keeps their status (docs/adr/0269). Default false.
   */
  lifecyclePolicies?: boolean;
  /**
   * `nodeReadiness.clusterGuardrails`: limits on taints added by every NodeReadinessRule together
   * (docs/adr/0259), which no rule author can raise; each field defaults to `ClusterGuardrailDefaults`.
   */
  nodeReadinessClusterGuardrails?: Required<ClusterGuardrails>;
}

/** One problem in a configuration file, naming its field. */
export interface ConfigProblem {
  /** Path of the field, dotted, with [i] for list items; '' for the document itself. */
  field: string;
  message: string;
}

/** A configuration, or every problem found in it. */
export type ConfigResult = { ok: true; config: ControllerConfig } | { ok: false; problems: ConfigProblem[] };

/** The configuration an empty file (or none) gives. */
export const defaultConfig: ControllerConfig = Object.freeze({
  execCommands: {},
  ephemeralContainerImage: undefined,
  keystoneLimit: 1,
  defaultStrategy: 'auto',
  namespaces: [],
  managedPodsOnly: false,
  containerStopSignals: false,
  lifecyclePolicies: false,
  nodeReadinessClusterGuardrails: Object.freeze({ ...ClusterGuardrailDefaults }),
}) as ControllerConfig;

const knownFields = ['execCommands', 'ephemeralContainer', 'keystoneLimit', 'defaultStrategy', 'namespaces', 'managedPodsOnly', 'containerStopSignals', 'lifecyclePolicies', 'nodeReadiness'];
const ephemeralFields = ['image', 'securityContext', 'matchTargetUser'];
const nodeReadinessFields = ['clusterGuardrails'];
const guardrailFields = Object.keys(ClusterGuardrailBounds) as (keyof ClusterGuardrails)[];
/** securityContext fields a container may set (core/v1 SecurityContext). */
const securityContextFields: Record<string, 'boolean' | 'integer' | 'object' | 'string'> = {
  allowPrivilegeEscalation: 'boolean',
  appArmorProfile: 'object',
  capabilities: 'object',
  privileged: 'boolean',
  procMount: 'string',
  readOnlyRootFilesystem: 'boolean',
  runAsGroup: 'integer',
  runAsNonRoot: 'boolean',
  runAsUser: 'integer',
  seLinuxOptions: 'object',
  seccompProfile: 'object',
  windowsOptions: 'object',
};

function securityContextProblem(sc: unknown): { field: string; message: string } | undefined {
  if (!isRecord(sc)) return { field: '', message: 'must be a mapping (a container securityContext)' };
  for (const [key, value] of Object.entries(sc)) {
    const type = securityContextFields[key];
    if (!Object.hasOwn(securityContextFields, key) || type === undefined) return { field: `.${key}`, message: 'unknown securityContext field' };
    const ok = type === 'integer' ? Number.isInteger(value) : type === 'object' ? isRecord(value) : typeof value === type;
    if (!ok) return { field: `.${key}`, message: `must be ${type === 'integer' ? 'an integer' : `a ${type === 'object' ? 'mapping' : type}`}` };
  }
  return undefined;
}

/** Parses and validates the YAML text of a configuration file. */
export function parseConfig(text: string): ConfigResult {
  const doc = parseDocument(text, { prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    return { ok: false, problems: doc.errors.map((e) => ({ field: '', message: `YAML: ${e.message}` })) };
  }
  const raw: unknown = doc.toJS();
  if (raw === null || raw === undefined) return validateConfig({});
  if (!isRecord(raw)) return { ok: false, problems: [{ field: '', message: 'must be a mapping of settings' }] };
  return validateConfig(raw);
}

/** Records a problem with a field. */
type Problem = (field: string, message: string) => void;

function present(value: unknown): boolean {
  return value !== undefined && value !== null;
}

/** `execCommands`: each name a DNS label, each command a non-empty argv of non-empty strings. */
function readExecCommands(raw: unknown, problem: Problem): Record<string, string[]> {
  const execCommands: Record<string, string[]> = {};
  if (!present(raw)) return execCommands;
  if (!isRecord(raw)) {
    problem('execCommands', 'must be a mapping of name to a command (a list of strings)');
    return execCommands;
  }
  for (const [name, argv] of Object.entries(raw)) {
    const field = `execCommands.${name}`;
    if (dns1123LabelProblem(name) !== undefined) {
      problem(field, 'name must be lowercase letters, digits and "-" (at most 63), as used in "exec:<name>"');
      continue;
    }
    if (!Array.isArray(argv) || argv.length === 0) {
      problem(field, 'must be a non-empty list of strings (argv, not a shell line)');
      continue;
    }
    const bad = argv.findIndex((a) => typeof a !== 'string' || a.length === 0);
    if (bad >= 0) problem(`${field}[${bad}]`, 'must be a non-empty string');
    else execCommands[name] = argv as string[];
  }
  return execCommands;
}

type EphemeralSettings = Pick<ControllerConfig, 'ephemeralContainerImage' | 'ephemeralContainerSecurityContext' | 'ephemeralContainerMatchTargetUser'>;

/** `ephemeralContainer`: known fields only, an image reference, a checked securityContext. */
function readEphemeralContainer(raw: unknown, problem: Problem): EphemeralSettings {
  const out: EphemeralSettings = { ephemeralContainerImage: undefined };
  if (!present(raw)) return out;
  if (!isRecord(raw)) {
    problem('ephemeralContainer', 'must be a mapping with an "image"');
    return out;
  }
  for (const key of Object.keys(raw)) {
    if (!ephemeralFields.includes(key)) problem(`ephemeralContainer.${key}`, `unknown field; the fields are ${ephemeralFields.join(', ')}`);
  }
  const image = raw.image;
  if (typeof image !== 'string' || image.trim() === '' || /\s/.test(image)) {
    problem('ephemeralContainer.image', 'must be an image reference without spaces (e.g. "busybox:1.36")');
  } else out.ephemeralContainerImage = image;
  if (raw.securityContext !== undefined) {
    const found = securityContextProblem(raw.securityContext);
    if (found) problem(`ephemeralContainer.securityContext${found.field}`, found.message);
    else {
      // Laid over the restricted default: a field left out never falls back to the pod's or the runtime's.
      const merged = restrictedStopContext(raw.securityContext as V1SecurityContext);
      if (merged.ok) out.ephemeralContainerSecurityContext = merged.context;
      else for (const p of merged.problems) problem(`ephemeralContainer.securityContext${p.field}`, `${p.message}: the stop container runs no weaker than Pod Security "restricted"`);
    }
  }
  if (raw.matchTargetUser !== undefined) {
    if (typeof raw.matchTargetUser !== 'boolean') problem('ephemeralContainer.matchTargetUser', 'must be true or false');
    else out.ephemeralContainerMatchTargetUser = raw.matchTargetUser;
  }
  return out;
}

function readKeystoneLimit(raw: unknown, problem: Problem): number {
  if (raw === undefined) return defaultConfig.keystoneLimit;
  if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < 1) {
    problem('keystoneLimit', 'must be an integer >= 1');
    return defaultConfig.keystoneLimit;
  }
  return raw;
}

function readDefaultStrategy(raw: unknown, problem: Problem): StopStrategy {
  if (raw === undefined) return defaultConfig.defaultStrategy;
  if (typeof raw !== 'string' || !(stopStrategies as readonly string[]).includes(raw)) {
    problem('defaultStrategy', `must be one of ${stopStrategies.join(', ')}`);
    return defaultConfig.defaultStrategy;
  }
  return raw as StopStrategy;
}

/** `namespaces`: valid names, each once. */
function readNamespaces(raw: unknown, problem: Problem): string[] {
  const namespaces: string[] = [];
  if (!present(raw)) return namespaces;
  if (!Array.isArray(raw)) {
    problem('namespaces', 'must be a list of namespace names');
    return namespaces;
  }
  raw.forEach((ns: unknown, i) => {
    const problemText = typeof ns === 'string' ? namespaceProblem(ns) : 'must be a string';
    if (problemText) problem(`namespaces[${i}]`, problemText);
    else if (!namespaces.includes(ns as string)) namespaces.push(ns as string);
  });
  return namespaces;
}

function readBoolean(raw: unknown, field: 'managedPodsOnly' | 'containerStopSignals' | 'lifecyclePolicies', problem: Problem): boolean | undefined {
  if (raw === undefined) return defaultConfig[field];
  if (typeof raw !== 'boolean') {
    problem(field, 'must be true or false');
    return defaultConfig[field];
  }
  return raw;
}

/** `nodeReadiness.clusterGuardrails`: known fields only, each an integer within the library's bounds. */
function readNodeReadiness(raw: unknown, problem: Problem): Required<ClusterGuardrails> {
  const out = { ...ClusterGuardrailDefaults };
  if (!present(raw)) return out;
  if (!isRecord(raw)) {
    problem('nodeReadiness', 'must be a mapping with "clusterGuardrails"');
    return out;
  }
  for (const key of Object.keys(raw)) {
    if (!nodeReadinessFields.includes(key)) problem(`nodeReadiness.${key}`, `unknown field; the fields are ${nodeReadinessFields.join(', ')}`);
  }
  const guardrails = raw.clusterGuardrails;
  if (!present(guardrails)) return out;
  if (!isRecord(guardrails)) {
    problem('nodeReadiness.clusterGuardrails', `must be a mapping of ${guardrailFields.join(', ')}`);
    return out;
  }
  for (const [key, value] of Object.entries(guardrails)) {
    const field = `nodeReadiness.clusterGuardrails.${key}`;
    if (!(guardrailFields as string[]).includes(key)) {
      problem(field, `unknown field; the fields are ${guardrailFields.join(', ')}`);
      continue;
    }
    const { min, max } = ClusterGuardrailBounds[key as keyof ClusterGuardrails];
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) problem(field, `must be an integer from ${min} to ${max}`);
    else out[key as keyof ClusterGuardrails] = value;
  }
  return out;
}

/** Validates an already-parsed configuration object: every problem found, or the configuration. */
export function validateConfig(raw: Record<string, unknown>): ConfigResult {
  const problems: ConfigProblem[] = [];
  const problem: Problem = (field, message) => void problems.push({ field, message });
  for (const key of Object.keys(raw)) {
    if (!knownFields.includes(key)) problem(key, `unknown field; known fields are ${knownFields.join(', ')}`);
  }
  const execCommands = readExecCommands(raw.execCommands, problem);
  const ephemeral = readEphemeralContainer(raw.ephemeralContainer, problem);
  const keystoneLimit = readKeystoneLimit(raw.keystoneLimit, problem);
  const defaultStrategy = readDefaultStrategy(raw.defaultStrategy, problem);
  if (defaultStrategy === 'ephemeral' && ephemeral.ephemeralContainerImage === undefined && !problems.some((p) => p.field.startsWith('ephemeralContainer'))) {
    problem('ephemeralContainer.image', 'is required when defaultStrategy is "ephemeral"');
  }
  const namespaces = readNamespaces(raw.namespaces, problem);
  const managedPodsOnly = readBoolean(raw.managedPodsOnly, 'managedPodsOnly', problem);
  const containerStopSignals = readBoolean(raw.containerStopSignals, 'containerStopSignals', problem);
  const lifecyclePolicies = readBoolean(raw.lifecyclePolicies, 'lifecyclePolicies', problem);
  const nodeReadinessClusterGuardrails = readNodeReadiness(raw.nodeReadiness, problem);
  if (problems.length > 0) return { ok: false, problems };
  const { ephemeralContainerImage, ephemeralContainerSecurityContext, ephemeralContainerMatchTargetUser } = ephemeral;
  return {
    ok: true,
    config: {
      execCommands,
      ephemeralContainerImage,
      ...(ephemeralContainerSecurityContext ? { ephemeralContainerSecurityContext } : {}),
      ...(ephemeralContainerMatchTargetUser !== undefined ? { ephemeralContainerMatchTargetUser } : {}),
      keystoneLimit,
      defaultStrategy,
      namespaces,
      managedPodsOnly,
      containerStopSignals,
      lifecyclePolicies,
      nodeReadinessClusterGuardrails,
    },
  };
}

/** Why a string is not a namespace name (a DNS-1123 label), or undefined when it is one. */
export function namespaceProblem(ns: string): string | undefined {
  if (dns1123LabelProblem(ns) !== undefined) {
    return `"${ns}" is not a namespace name (lowercase letters, digits and "-", at most 63)`;
  }
  return undefined;
}

export function formatProblems(problems: readonly ConfigProblem[]): string {
  return problems.map((p) => (p.field ? `${p.field}: ${p.message}` : p.message)).join('\n');
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
