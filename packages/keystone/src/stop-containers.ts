/**
 * What a stop leaves in a pod, shared by the rules that read it and the actuators that write it:
 * the ephemeral stop container's name and the exit code that says its target's PID 1 cannot
 * receive the signal from inside its PID namespace.
 *
 * Guarantees: names are deterministic per (container, plain|kill) and valid container names
 * (at most 63 characters, shortened with a stable hash).
 */

const NAME_MAX = 63;

/** FNV-1a, for short stable suffixes when a name must be truncated. */
function hash36(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(36);
}

/** `podlife-stop-<container>` (`podlife-kill-…` in records of older releases), shortened with a hash past 63 characters. */
export function ephemeralName(container: string, escalated: boolean): string {
  const name = `podlife-${escalated ? 'kill' : 'stop'}-${container}`;
  if (name.length <= NAME_MAX) return name;
  const suffix = `-${hash36(name)}`;
  return name.slice(0, NAME_MAX - suffix.length).replace(/-+$/, '') + suffix;
}

/** The signal script's exit code when PID 1 has no handler for the signal (it was sent all the same). */
export const NO_HANDLER_EXIT = 3;
