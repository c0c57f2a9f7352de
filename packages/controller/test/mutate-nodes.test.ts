import assert from 'node:assert/strict';
import { mutateNodesHandler } from '../src/webhook/mutate-nodes.js';

/** The `/mutate-nodes` route on bodies the server has already bounded: what it answers, and that it never throws. */
describe('/mutate-nodes route', () => {
  const signal = new AbortController().signal;
  const review = (kind: string) =>
    Buffer.from(
      JSON.stringify({
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        request: { uid: 'u-1', kind: { group: '', version: 'v1', kind }, operation: 'CREATE', object: { metadata: { name: 'n-1' } } },
      }),
    );

  it('answers a body that is not JSON with 400 naming the parse error, without reading the rules', async () => {
    let read = 0;
    const route = mutateNodesHandler(() => {
      read++;
      return undefined;
    });
    const answer = await route(Buffer.from('{"apiVersion": '), signal);
    assert.equal(answer.status, 400);
    assert.match((answer.body as { error: string }).error, /^body is not JSON: /);
    assert.equal(read, 0);
  });

  it('admits a node unchanged, with a warning, while the rules are not known or cannot be read', async () => {
    for (const rules of [() => undefined, () => { throw new Error('cache not synced'); }]) {
      const answer = await mutateNodesHandler(rules)(review('Node'), signal);
      assert.equal(answer.status, 200);
      const response = (answer.body as { response: { uid: string; allowed: boolean; patch?: string; warnings?: string[] } }).response;
      assert.equal(response.uid, 'u-1');
      assert.equal(response.allowed, true);
      assert.equal(response.patch, undefined);
      assert.match(response.warnings?.[0] ?? '', /readiness rules not loaded yet/);
    }
  });

  it('allows a review of another kind unchanged', async () => {
    const answer = await mutateNodesHandler(() => undefined)(review('Pod'), signal);
    assert.equal(answer.status, 200);
    assert.deepEqual((answer.body as { response: unknown }).response, { uid: 'u-1', allowed: true });
  });
});
