import assert from 'node:assert/strict';
import { parseFlags, type FlagsResult, type ControllerFlags } from '../src/options/flags.js';

function ok(result: FlagsResult): ControllerFlags {
  assert.ok(result.ok, result.ok ? '' : result.problems.join('; '));
  return result.flags;
}
function problems(result: FlagsResult): string[] {
  assert.equal(result.ok, false, 'expected problems');
  return result.ok ? [] : result.problems;
}

describe('podlife-controller flags', () => {
  it('defaults to the keystone and network-conditions controllers, acting, on every namespace', () => {
    const flags = ok(parseFlags([]));
    assert.deepEqual(flags.controllers, ['keystone', 'network-conditions']);
    assert.deepEqual(flags.namespaces, []);
    assert.equal(flags.dryRun, false);
    assert.equal(flags.webhookPort, undefined);
    assert.equal(flags.metricsPort, 8080);
    assert.equal(flags.healthPort, 8081);
  });

  it('enables the controllers named in --controllers', () => {
    assert.deepEqual(ok(parseFlags(['--controllers=keystone,node-readiness'])).controllers, ['keystone', 'node-readiness']);
  });

  it('names an unknown controller', () => {
    assert.match(problems(parseFlags(['--controllers=keystone,sidecar']))[0] ?? '', /--controllers: unknown controller "sidecar"/);
  });

  it('accepts --namespace repeated and comma-separated', () => {
    assert.deepEqual(ok(parseFlags(['--namespace', 'a', '--namespace=b,c'])).namespaces, ['a', 'b', 'c']);
  });

  it('names an invalid namespace', () => {
    assert.match(problems(parseFlags(['--namespace=Bad'])).join(), /--namespace: "Bad"/);
  });

  it('refuses an unknown flag, so a typo cannot turn dry run off', () => {
    assert.match(problems(parseFlags(['--dryrun'])).join(), /dryrun/);
  });

  it('reads --dry-run, --leader-elect, --kubeconfig and --context', () => {
    const flags = ok(parseFlags(['--dry-run', '--leader-elect', '--kubeconfig=/k', '--context=dev']));
    assert.equal(flags.dryRun, true);
    assert.equal(flags.leaderElect, true);
    assert.equal(flags.kubeconfig, '/k');
    assert.equal(flags.context, 'dev');
  });

  it('watches every pod unless --managed-pods-only is given', () => {
    assert.equal(ok(parseFlags([])).managedPodsOnly, false);
    assert.equal(ok(parseFlags(['--managed-pods-only'])).managedPodsOnly, true);
  });

  it('takes the Lease namespace from POD_NAMESPACE when not given', () => {
    assert.equal(ok(parseFlags([], { POD_NAMESPACE: 'ops' })).leaderElectionNamespace, 'ops');
  });

  it('requires a certificate and key with --webhook-port', () => {
    assert.match(problems(parseFlags(['--webhook-port=9443'])).join(), /--webhook-port: needs --tls-cert-file/);
  });

  it('reads the webhook port and files', () => {
    const flags = ok(parseFlags(['--webhook-port=9443', '--tls-cert-file=c.pem', '--tls-key-file=k.pem']));
    assert.deepEqual([flags.webhookPort, flags.tlsCertFile, flags.tlsKeyFile], [9443, 'c.pem', 'k.pem']);
  });

  it('turns metrics off with --metrics-port=0', () => {
    assert.equal(ok(parseFlags(['--metrics-port=0'])).metricsPort, undefined);
  });

  it('names a port that is not a number', () => {
    assert.match(problems(parseFlags(['--health-port=http'])).join(), /--health-port: "http" is not a port/);
  });

  it('refuses positional arguments', () => {
    assert.equal(parseFlags(['keystone']).ok, false);
  });
});
