/**
 * `podlife migrate nrc [--apply]`: turns the NodeReadinessRules of node-readiness-controller
 * (`readiness.node.x-k8s.io/v1alpha1`) into podlife's, so a cluster switches without a node being
 * tainted again or a taint left behind (docs/adr/0272, docs/guides/migrate-from-nrc.md).
 *
 * Guarantees:
 * - a dry run by default: it reads, prints what `--apply` would change, and writes nothing;
 * - idempotent: after `--apply`, running it again finds nothing to change;
 * - whole rules only: an NRC rule podlife cannot honour exactly (a field it does not know, a rule
 *   it would reject, a name already taken) is printed with every reason and, with `--apply`,
 *   reported in a Warning Event on that NRC rule; nothing of it is created, and its NRC finalizer
 *   stays;
 * - order: a podlife rule is created before its NRC rule's finalizer is removed, so at no moment
 *   are the taints NRC put on nobody's to clean up; the finalizer removal is locked on the
 *   resourceVersion the plan was made from.
 *
 * Exit codes: 0 every NRC rule is migrated (or nothing to do), 1 the cluster could not be read or
 * serves no NRC or podlife rules, 3 some NRC rules were not migrated (each named on stdout).
 */
import { ContentType, EventRecorder, isConflict, isNotFound, resourcePath } from '@podlife/core';
import type { KubeClient } from '@podlife/core';
import { NrcGroup, NrcResource, NrcVersion, planNrcMigration, rulePath } from '@podlife/node-readiness';
import type { MigrationPlan, MigrationStep, NodeReadinessRule, NrcRule } from '@podlife/node-readiness';
import type { MigrateArgs } from './args.js';
import { connect } from './kubeconfig.js';
import type { Streams } from './nodes.js';
import { listAll } from './nodes.js';
import { isData, renderData } from './output.js';
import { terminalText } from './terminal.js';

/** The REST path of NRC's rules. */
export const nrcRulePath = (name?: string): string => resourcePath({ group: NrcGroup, version: NrcVersion, resource: NrcResource, ...(name ? { name } : {}) });

/** Exit code when some NRC rules were not migrated. */
export const NotMigratedExit = 3;

/** One line per step, as the user reads the plan. */
export function renderPlan(plan: MigrationPlan, apply: boolean): string {
  const lines: string[] = [];
  const verb = (s: MigrationStep): string => (s.op === 'create-rule' ? 'create' : s.op === 'remove-finalizer' ? 'unlock' : s.op === 'not-migrated' ? 'REFUSED' : 'ok');
  for (const s of plan.steps) {
    lines.push(`${verb(s).padEnd(8)} ${s.nrcRule}: ${s.op === 'not-migrated' ? 'not migrated, nothing of it is applied' : s.message}`);
    if (s.op === 'not-migrated') for (const p of s.problems) lines.push(`           ${p.field}: ${p.message}`);
  }
  if (plan.steps.length === 0) lines.push('no node-readiness-controller rules in this cluster: nothing to migrate');
  else if (plan.changes === 0) lines.push('nothing to change');
  else if (!apply) lines.push(`dry run: ${plan.changes} change(s) above, none made; run again with --apply to make them`);
  return lines.map(terminalText).join('\n');
}

/** Lists `path`, or undefined when the API server does not serve it (its CRD is not installed). */
async function listIfServed<T>(client: KubeClient, path: string): Promise<T[] | undefined> {
  try {
    return await listAll<T>(client, path);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** Carries out `plan` in order; returns what went wrong, per NRC rule. */
export async function applyPlan(client: Pick<KubeClient, 'create' | 'patch'>, plan: MigrationPlan, nrcRules: readonly NrcRule[], events?: Pick<EventRecorder, 'event'>): Promise<string[]> {
  const failed: string[] = [];
  const created = new Set<string>();
  for (const s of plan.steps) {
    if (s.op === 'create-rule') {
      try {
        await client.create(rulePath(), s.rule);
        created.add(s.nrcRule);
      } catch (err) {
        failed.push(`${s.nrcRule}: could not create its podlife rule: ${(err as Error).message}`);
      }
    } else if (s.op === 'remove-finalizer') {
      // Never unlock a rule whose podlife rule this run failed to create.
      if (plan.steps.some((x) => x.op === 'create-rule' && x.nrcRule === s.nrcRule) && !created.has(s.nrcRule)) continue;
      try {
        await client.patch(
          nrcRulePath(s.nrcRule),
          [
            { op: 'test', path: '/metadata/resourceVersion', value: s.resourceVersion },
            { op: 'replace', path: '/metadata/finalizers', value: s.finalizers },
          ],
          ContentType.JsonPatch,
        );
      } catch (err) {
        const why = isConflict(err) || (err as { status?: number }).status === 422 ? 'the rule changed meanwhile; run again' : (err as Error).message;
        failed.push(`${s.nrcRule}: could not remove finalizer: ${why}`);
      }
    } else if (s.op === 'not-migrated') {
      const nrc = nrcRules.find((r) => r.metadata?.name === s.nrcRule);
      if (nrc && events) {
        const note = `podlife migrate nrc: not migrated, nothing of this rule is applied by podlife: ${s.problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`;
        await events.event({ apiVersion: `${NrcGroup}/${NrcVersion}`, kind: 'NodeReadinessRule', metadata: nrc.metadata ?? {} }, 'Warning', 'NotMigrated', note, 'Migrate');
      }
    }
  }
  return failed;
}

export async function runMigrateNrc(args: MigrateArgs, io: Streams): Promise<number> {
  const client = await connect(args);
  try {
    const nrcRules = await listIfServed<NrcRule>(client, nrcRulePath());
    if (nrcRules === undefined) {
      io.err('podlife: this cluster serves no node-readiness-controller rules (no nodereadinessrules.readiness.node.x-k8s.io CRD): nothing to migrate\n');
      return 1;
    }
    const mine = await listIfServed<NodeReadinessRule>(client, rulePath());
    if (mine === undefined) {
      io.err("podlife: podlife's NodeReadinessRule CRD is not installed (deploy/crds/nodereadinessrules.yaml): install it, then migrate\n");
      return 1;
    }
    const plan = planNrcMigration(nrcRules, mine);
    if (isData(args.output)) io.out(`${renderData({ apply: args.apply, changes: plan.changes, steps: plan.steps }, args.output)}\n`);
    else io.out(`${renderPlan(plan, args.apply)}\n`);
    if (args.apply) {
      const events = new EventRecorder({ client, controller: 'podlife.dev/migrate', instance: 'podlife-cli' });
      const failed = await applyPlan(client, plan, nrcRules, events);
      await events.close();
      for (const f of failed) io.err(`${terminalText(`podlife: ${f}`)}\n`);
      if (failed.length > 0) return 1;
    }
    return plan.steps.some((s) => s.op === 'not-migrated') ? NotMigratedExit : 0;
  } finally {
    client.close();
  }
}
