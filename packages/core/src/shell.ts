/**
 * Words of a command printed for pasting into a POSIX shell (sh, bash, zsh): a name that came from
 * the cluster pastes as exactly one argument, never as shell syntax (`;`, `|`, `$( )`, globs,
 * spaces, quotes).
 */

/** True when `word` is one shell argument as it is: only letters, digits and `@%+=:,./_-`, not empty. */
export function isShellPlain(word: string): boolean {
  return /^[A-Za-z0-9@%+=:,./_-]+$/.test(word);
}

/** `word` as one shell argument: as it is when plain, else in single quotes (a `'` inside as `'\''`). */
export function shellQuote(word: string): string {
  return isShellPlain(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}
