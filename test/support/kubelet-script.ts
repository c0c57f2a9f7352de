/**
 * What a simulated container does: the script language of the simulated kubelet.
 *
 * A pod's script comes from `SimulatedKubelet.script(namespace, name, script)` or, failing that,
 * from the pod annotation `sim.podlife.dev/script` (JSON of the same shape). A container not
 * named in the script follows `default`, and without that the built-in default: it starts at
 * once, is ready at once, runs until stopped, and exits 128+N on signal N.
 *
 * Signals reach a container in two ways: the kubelet sends TERM when the pod is deleted or made
 * terminal by someone else (then KILL when the grace period ends), and an ephemeral container
 * whose command is `kill [-SIG|-s SIG|-N] 1` (directly, or inside `sh -c '...'`) sends SIG (TERM
 * when none is given) to PID 1 of its `targetContainerName`, then exits 0. This is the only thing
 * an ephemeral container does that the simulation understands; the signal is not delivered when
 * the pod shares its process namespace (PID 1 is then the sandbox's, not the target's).
 * `kubectl exec` has no simulated equivalent: exec is served by a real kubelet, which this is not.
 *
 * Pure: parsing and lookups only.
 */

export const SCRIPT_ANNOTATION = 'sim.podlife.dev/script';

export const SIGNAL_NUMBERS = { HUP: 1, INT: 2, QUIT: 3, KILL: 9, USR1: 10, USR2: 12, TERM: 15 } as const;
export type SignalName = keyof typeof SIGNAL_NUMBERS;

export interface ContainerScript {
  /** From the moment the container may start to running (default 0). */
  startDelayMs?: number;
  /** From running to ready (default 0); null: never ready. */
  readyAfterMs?: number | null;
  /** From running to exiting on its own; omitted: runs until a signal stops it. */
  runMs?: number;
  /** Exit code when `runMs` elapses (default 0). */
  exitCode?: number;
  /** Exit code per signal (default 128 + the signal's number); null: the signal is ignored. KILL is never ignored. */
  exitOnSignal?: Partial<Record<SignalName, number | null>>;
  /** From receiving a handled signal to exiting (default 0). */
  signalExitDelayMs?: number;
}

export interface PodScript {
  /** From binding to a ready sandbox: PodReadyToStartContainers=True and a pod IP (default 0). */
  sandboxDelayMs?: number;
  /** Scripts by container name (init, regular and ephemeral containers alike). */
  containers?: Record<string, ContainerScript>;
  /** Script for the containers `containers` does not name. */
  default?: ContainerScript;
}

export function containerScript(script: PodScript | undefined, name: string): ContainerScript {
  return script?.containers?.[name] ?? script?.default ?? {};
}

/** The exit code a signal produces, or undefined when the container ignores it. */
export function exitCodeForSignal(script: ContainerScript, signal: SignalName): number | undefined {
  const fallback = 128 + SIGNAL_NUMBERS[signal];
  if (signal === 'KILL') return fallback;
  const scripted = script.exitOnSignal?.[signal];
  if (scripted === null) return undefined;
  return scripted ?? fallback;
}

/** Parses the annotation; a problem is returned as a message naming the annotation, never thrown. */
export function parseScriptAnnotation(value: string | undefined): { script?: PodScript; problem?: string } {
  if (value === undefined) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch (err) {
    return { problem: `annotation ${SCRIPT_ANNOTATION} is not JSON: ${err instanceof Error ? err.message : String(err)}` };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { problem: `annotation ${SCRIPT_ANNOTATION} must be a JSON object like {"containers":{"app":{"runMs":1000}}}` };
  }
  return { script: parsed as PodScript };
}

function signalFromToken(token: string | undefined): SignalName | undefined {
  if (token === undefined) return 'TERM';
  const upper = token.toUpperCase().replace(/^SIG/, '');
  if (upper in SIGNAL_NUMBERS) return upper as SignalName;
  const n = Number(upper);
  const entry = Object.entries(SIGNAL_NUMBERS).find(([, v]) => v === n);
  return entry ? (entry[0] as SignalName) : undefined;
}

/**
 * `sh -c SCRIPT NAME ARG1 ARG2…` with the positional parameters (`$1`, `"$2"`) of SCRIPT replaced
 * by their values, so a script that takes the signal as an argument reads like a literal `kill`.
 */
function expandShellArgs(argv: readonly string[]): string {
  const shell = argv[0]?.split('/').pop();
  if ((shell !== 'sh' && shell !== 'bash') || argv[1] !== '-c' || argv[2] === undefined) return argv.join(' ');
  const positional = argv.slice(3); // $0, $1, …
  return argv[2].replace(/"?\$(\d)"?/g, (whole, n: string) => positional[Number(n)] ?? whole);
}

/** The signal an ephemeral container's command sends to PID 1, if its command is a `kill ... 1`. */
export function signalSentToPid1(command: readonly string[] | undefined, args: readonly string[] | undefined): SignalName | undefined {
  const text = expandShellArgs([...(command ?? []), ...(args ?? [])]);
  const m = /(?:^|[\s;&|'"])kill\s+(?:-s\s+(\w+)\s+|-(\w+)\s+)?1(?=$|[\s;&|'"])/.exec(text);
  if (!m) return undefined;
  return signalFromToken(m[1] ?? m[2]);
}
