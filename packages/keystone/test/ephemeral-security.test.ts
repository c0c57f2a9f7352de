import assert from 'node:assert/strict';
import type { V1Pod, V1SecurityContext } from '@kubernetes/client-node';
import { describe, it } from 'mocha';
import { type StopSpec } from '../src/index.js';
import { RESTRICTED_STOP_CONTEXT, ephemeralStopContainer } from '../src/strategies/ephemeral.js';

const TERM: StopSpec = { kind: 'signal', signal: 'TERM' };
const HTTP: StopSpec = { kind: 'http', port: 4191, path: '/shutdown' };

function podWith(target: V1SecurityContext | undefined, podUser?: number): V1Pod {
  return {
    metadata: { name: 'p', namespace: 'default' },
    spec: {
      ...(podUser !== undefined ? { securityContext: { runAsUser: podUser } } : {}),
      containers: [{ name: 'app' }, { name: 'proxy', ...(target ? { securityContext: target } : {}) }],
    },
  };
}

/** The Pod Security "restricted" profile's container-level requirements. */
function assertRestricted(sc: V1SecurityContext | undefined): void {
  assert.ok(sc);
  assert.equal(sc.runAsNonRoot, true);
  assert.notEqual(sc.runAsUser, 0);
  assert.equal(sc.allowPrivilegeEscalation, false);
  assert.equal(sc.privileged ?? false, false);
  assert.deepEqual(sc.capabilities?.drop, ['ALL']);
  assert.equal(sc.capabilities?.add, undefined);
  assert.equal(sc.seccompProfile?.type, 'RuntimeDefault');
}

describe('the ephemeral stop container takes its privileges from config, never from the pod', () => {
  it('is restricted-profile compatible by default', () => {
    const c = ephemeralStopContainer(podWith(undefined), 'proxy', TERM, false, 'busybox:1.36');
    assertRestricted(c?.securityContext);
    assert.deepEqual(c?.securityContext, RESTRICTED_STOP_CONTEXT);
  });

  it('copies nothing privileged from the target', () => {
    const target: V1SecurityContext = { privileged: true, runAsUser: 0, allowPrivilegeEscalation: true, capabilities: { add: ['SYS_ADMIN'] } };
    const c = ephemeralStopContainer(podWith(target), 'proxy', TERM, false, 'busybox:1.36');
    assertRestricted(c?.securityContext);
    assert.equal(c?.securityContext?.runAsUser, RESTRICTED_STOP_CONTEXT.runAsUser);
  });

  it('shares the target\'s non-root user for a signal (kill(2) needs the same uid without CAP_KILL), and only the user', () => {
    const c = ephemeralStopContainer(podWith({ runAsUser: 1337, capabilities: { add: ['NET_ADMIN'] } }), 'proxy', TERM, false, 'busybox:1.36');
    assertRestricted(c?.securityContext);
    assert.deepEqual(c?.securityContext, { ...RESTRICTED_STOP_CONTEXT, runAsUser: 1337 });
  });

  it('takes the pod-level user when the target sets none', () => {
    const c = ephemeralStopContainer(podWith(undefined, 2000), 'proxy', TERM, false, 'busybox:1.36');
    assert.equal(c?.securityContext?.runAsUser, 2000);
  });

  it('does not share the user for an http stop (a POST to loopback needs none)', () => {
    const c = ephemeralStopContainer(podWith({ runAsUser: 1337 }), 'proxy', HTTP, false, 'busybox:1.36');
    assert.deepEqual(c?.securityContext, RESTRICTED_STOP_CONTEXT);
  });

  it('uses the configured securityContext, and shares no user when told not to', () => {
    const configured: V1SecurityContext = { ...RESTRICTED_STOP_CONTEXT, runAsUser: 4242, readOnlyRootFilesystem: true };
    const c = ephemeralStopContainer(podWith({ runAsUser: 1337 }), 'proxy', TERM, false, 'busybox:1.36', { securityContext: configured, matchTargetUser: false });
    assert.deepEqual(c?.securityContext, configured);
  });

  it('never mutates the configured context or the default', () => {
    const configured: V1SecurityContext = { ...RESTRICTED_STOP_CONTEXT };
    ephemeralStopContainer(podWith({ runAsUser: 1337 }), 'proxy', TERM, false, 'busybox:1.36', { securityContext: configured });
    assert.equal(configured.runAsUser, RESTRICTED_STOP_CONTEXT.runAsUser);
    assert.equal(RESTRICTED_STOP_CONTEXT.runAsUser, 65532);
  });
});
