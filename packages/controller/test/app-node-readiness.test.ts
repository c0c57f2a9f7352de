import assert from 'node:assert/strict';
import { silentLogger, type KubeClient } from '@podlife/core';
import { ControllerApp } from '../src/app.js';
import { defaultConfig, parseConfig, type ControllerConfig } from '../src/options/config-file.js';
import { parseFlags } from '../src/options/flags.js';

/** An app running node-readiness only; nothing is started, so the client is never called. */
function nodeReadinessApp(config: ControllerConfig): ControllerApp {
  const flags = parseFlags(['--controllers=node-readiness', '--metrics-port=0', '--health-port=0']);
  assert.ok(flags.ok);
  return new ControllerApp({ flags: flags.flags, config, client: {} as KubeClient, logger: silentLogger() });
}

describe('ControllerApp: the config file\'s nodeReadiness.clusterGuardrails reach the node-readiness controller', () => {
  it('the cluster-wide addition bucket has the burst and rate the file sets', () => {
    const parsed = parseConfig('nodeReadiness: { clusterGuardrails: { additionsPerMinute: 6, additionBurst: 3 } }');
    assert.ok(parsed.ok);
    const bucket = nodeReadinessApp(parsed.config).nodeReadiness?.fleet.clusterBucket;
    assert.ok(bucket, 'node-readiness was built');
    assert.deepEqual([bucket.take(), bucket.take(), bucket.take(), bucket.take()], [true, true, true, false]);
    // 6 per minute: the next token is 10 s away (the default, 120 per minute, would be 0.5 s).
    assert.ok(bucket.waitMs() > 9_000 && bucket.waitMs() <= 10_000, `waitMs ${bucket.waitMs()}`);
  });

  it('without the section, the library defaults (burst 20)', () => {
    const bucket = nodeReadinessApp(defaultConfig).nodeReadiness?.fleet.clusterBucket;
    assert.ok(bucket);
    const taken = Array.from({ length: 21 }, () => bucket.take());
    assert.equal(taken.filter(Boolean).length, 20);
  });

  it('the cluster share is passed on too: one the library refuses stops the app, naming it', () => {
    const config: ControllerConfig = { ...defaultConfig, nodeReadinessClusterGuardrails: { additionsPerMinute: 120, additionBurst: 20, maxTaintedPercent: 101 } };
    assert.throws(() => nodeReadinessApp(config), /clusterGuardrails\.maxTaintedPercent must be an integer between 0 and 100/);
  });
});
