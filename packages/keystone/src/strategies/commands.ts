/**
 * What runs inside a pod to deliver a stop spec: the argv lists of both routes, pods/exec
 * (`execCommands`) and an ephemeral stop container (`ephemeralCommand`).
 *
 * Guarantees:
 * - scripts are constant text; the signal name and number (from a fixed list), the port and the
 *   path are positional arguments, so no spec can smuggle shell syntax or extra arguments;
 * - signals: SIGNAL_SCRIPT first tells whether PID 1 has a handler (the kernel drops a signal
 *   sent to a namespace's init from inside without one), then `kill -s SIG 1` for images
 *   without a shell;
 * - http/presets POST to 127.0.0.1 (curl, then GNU wget, then a sh+nc script for busybox) and
 *   never follow a redirect;
 * - `exec:<name>` runs exactly the argv the controller configuration names, nothing else.
 */
import type { StopSpec } from '../annotations.js';
import { NO_HANDLER_EXIT } from '../stop-containers.js';

const SIGNAL_NUMBERS: Readonly<Record<string, number>> = Object.freeze({ HUP: 1, INT: 2, QUIT: 3, KILL: 9, USR1: 10, USR2: 12, TERM: 15 });

/**
 * Signal PID 1 (`$1` the name, `$2` the number), telling first whether it has a handler: init of a
 * PID namespace gets a signal from inside only if it caught it (SigCgt in /proc/1/status; never
 * for KILL). Without one it prints why and exits NO_HANDLER_EXIT. Only sh builtins and kill.
 */
export const SIGNAL_SCRIPT =
  'm=; while read -r k v; do [ "$k" = SigCgt: ] && m=$v; done < /proc/1/status; ' +
  `if [ -n "$m" ] && [ $(( 0x\${m#????????} >> ($2 - 1) & 1 )) = 0 ]; then ` +
  `echo "PID 1 has no handler for SIG$1, so the kernel drops it when sent from inside the container"; kill -s "$1" 1; exit ${NO_HANDLER_EXIT}; fi; ` +
  'exec kill -s "$1" 1';

/**
 * SIGNAL_SCRIPT for a stop container that shares the target's PID namespace: after the signal
 * it stays until the target's init exits (the kernel then ends it). A container without its own
 * PID namespace that exits first has every process it can reach killed by the runtime's shim
 * (containerd kills all on exit for such containers), which can SIGKILL a target still running
 * its TERM handler.
 */
export const LINGERING_SIGNAL_SCRIPT = SIGNAL_SCRIPT.replace(/exec kill -s "\$1" 1$/, 'kill -s "$1" 1 || exit $?; exec sleep 2147483647');

/** argv for SIGNAL_SCRIPT (or LINGERING_SIGNAL_SCRIPT for a stop container). */
export function signalScriptArgv(signal: string, opts: { linger?: boolean } = {}): string[] {
  return ['/bin/sh', '-c', opts.linger ? LINGERING_SIGNAL_SCRIPT : SIGNAL_SCRIPT, 'podlife-stop', signal, String(SIGNAL_NUMBERS[signal] ?? 0)];
}

export function stopUrl(port: number, path: string): string {
  return `http://127.0.0.1:${port}${path}`;
}

/**
 * A POST to 127.0.0.1 with only sh, printf, nc, head and grep (busybox has them all), which can
 * never follow a redirect: the script is constant text, port and path are positional arguments
 * (`$1`, `$2`), and only a 2xx status line counts as success.
 */
export const POST_SCRIPT =
  `printf 'POST %s HTTP/1.0\\r\\nHost: 127.0.0.1\\r\\nContent-Length: 0\\r\\nConnection: close\\r\\n\\r\\n' "$2" ` +
  `| nc -w 5 127.0.0.1 "$1" | head -n 1 | grep -q '^HTTP/1\\.[01] 2'`;

/** argv for POST_SCRIPT. */
export function postScriptArgv(port: number, path: string): string[] {
  return ['/bin/sh', '-c', POST_SCRIPT, 'podlife-stop', String(port), path];
}

/** The commands to try, in order, for a stop spec (none when an exec name is not configured). */
export function execCommands(spec: StopSpec, commands: Readonly<Record<string, readonly string[]>> = {}): string[][] {
  switch (spec.kind) {
    case 'signal':
      return [signalScriptArgv(spec.signal), ['kill', '-s', spec.signal, '1']];
    case 'http': {
      const url = stopUrl(spec.port, spec.path);
      // None of these follows a redirect: curl does not without -L, GNU wget is told not to
      // (busybox wget cannot be, and refuses the flag), the script cannot.
      return [
        ['curl', '-fsS', '-X', 'POST', '--max-time', '5', url],
        ['wget', '-q', '-O-', '--post-data=', '--max-redirect=0', '-T', '5', url],
        postScriptArgv(spec.port, spec.path),
      ];
    }
    case 'exec': {
      const argv = Object.hasOwn(commands, spec.name) ? commands[spec.name] : undefined;
      return argv && argv.length > 0 ? [[...argv]] : [];
    }
  }
}

/** The stop container's command for a spec; undefined for `exec:` (named commands run inside the container itself). */
export function ephemeralCommand(spec: StopSpec): string[] | undefined {
  switch (spec.kind) {
    case 'signal':
      return signalScriptArgv(spec.signal, { linger: true });
    case 'http':
      return postScriptArgv(spec.port, spec.path);
    case 'exec':
      return undefined;
  }
}
