/**
 * The `/mutate-nodes` route: node-readiness's Node CREATE admission over the server's bounded
 * body, adding the readiness taints of the rules that select the new node (docs/adr/0274).
 *
 * Guarantees: a body that is not JSON is answered 400 with the reason; a review is always answered
 * 200 and allowed (fails open), with a patch only for a core v1 Node CREATE; before the rule cache
 * has synced, nodes are admitted unchanged with a warning; nothing throws.
 */
import { jsonRoute } from '@podlife/keystone';
import { admitNode } from '@podlife/node-readiness';
import type { RuleSet } from '@podlife/node-readiness';
import type { WebhookHandler } from './server.js';

/** The route, reading the rules in force from `rules` (undefined until they are known). */
export function mutateNodesHandler(rules: () => RuleSet | undefined): WebhookHandler {
  return jsonRoute((review) => {
    let set: RuleSet | undefined;
    try {
      set = rules();
    } catch {
      set = undefined;
    }
    return admitNode(review, set);
  });
}
