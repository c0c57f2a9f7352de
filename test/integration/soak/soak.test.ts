/**
 * The chaos soak's 3-minute form with the simulated kubelet (`pnpm soak -- --quick`, test/soak/) as
 * part of the test command: Jobs of every keystone kind against two leader-elected controller
 * processes (ephemeral strategy) while the leader is killed, the API server restarted and paused
 * and etcd compacted. It runs as a process of its own (its own control plane, kubelet and
 * replicas) and passes only when its table shows no stuck pod, no repeated stop, no sidecar
 * stopped before a main and no unexpected Job failure. The real-node form is soak-node.test.ts.
 *
 * @releases newest — each soak form once per run (ADR 0255); the 10-minute forms stay documented
 *   commands.
 */
import { describeQuickSoak } from '../../soak/quick-form.js';

describeQuickSoak({ name: 'simulated kubelet', args: [] });
