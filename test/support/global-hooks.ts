/**
 * Root-level mocha hooks for the integration suites (loaded with `--file`): the shared control
 * plane, if any suite started it, is stopped once every suite has run. Interrupted runs are
 * cleaned up by processes.ts.
 */
import { stopSharedControlPlane } from './control-plane.js';

after(async function () {
  this.timeout(60_000);
  await stopSharedControlPlane();
});
