/**
 * The chaos soak's 3-minute form on a real node (`pnpm soak -- --quick --real-node`, test/soak/):
 * the same Jobs, faults and replicas as soak.test.ts on one real node (kubelet, containerd, runc,
 * busybox containers, exec strategy), started by the soak process itself; it passes only when its
 * table shows no stuck pod, no repeated stop, no sidecar stopped before a main and no unexpected
 * Job failure.
 *
 * @releases newest — each soak form once per run (ADR 0255); the 10-minute forms stay documented
 *   commands.
 * @real-node — the soak process starts the node, so the runner cannot see it in the imports.
 */
import { describeQuickSoak } from '../../soak/quick-form.js';

describeQuickSoak({ name: 'real node', args: ['--real-node'] });
