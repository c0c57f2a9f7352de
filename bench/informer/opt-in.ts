/**
 * The share of pods that opt in to podlife's cache, in a module of its own: the measured child
 * (measure.ts) needs the number, and importing it from the fake API would load the pod and node
 * generators (and the test harness they draw their seeded generator from) into the very process
 * whose memory is measured, ~100 MiB of RSS that no controller holds.
 */

/** One pod in this many opted in to podlife's cache (DESIGN 10: 5%). */
export const OPT_IN_EVERY = 20;
