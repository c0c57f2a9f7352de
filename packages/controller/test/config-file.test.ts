import assert from 'node:assert/strict';
import { ClusterGuardrailDefaults } from '@podlife/node-readiness';
import { exampleConfig } from '../src/deploy/manifests.js';
import { formatProblems, parseConfig, defaultConfig, type ConfigResult } from '../src/options/config-file.js';

function problems(result: ConfigResult): string[] {
  assert.equal(result.ok, false, 'expected problems');
  return result.ok ? [] : result.problems.map((p) => p.field);
}

describe('configuration file', () => {
  it('an empty file is the default configuration', () => {
    const result = parseConfig('');
    assert.ok(result.ok);
    assert.deepEqual(result.config, defaultConfig);
  });

  it('reads every setting', () => {
    const result = parseConfig(`
execCommands:
  drain-envoy: ["/usr/local/bin/pilot-agent", "request", "POST", "quitquitquit"]
ephemeralContainer:
  image: registry.example/podlife/stopper:1.0
keystoneLimit: 2
defaultStrategy: ephemeral
namespaces: [jobs, batch]
managedPodsOnly: true
containerStopSignals: true
lifecyclePolicies: true
`);
    assert.ok(result.ok);
    assert.deepEqual(result.config, {
      execCommands: { 'drain-envoy': ['/usr/local/bin/pilot-agent', 'request', 'POST', 'quitquitquit'] },
      ephemeralContainerImage: 'registry.example/podlife/stopper:1.0',
      keystoneLimit: 2,
      defaultStrategy: 'ephemeral',
      namespaces: ['jobs', 'batch'],
      managedPodsOnly: true,
      containerStopSignals: true,
      lifecyclePolicies: true,
      nodeReadinessClusterGuardrails: ClusterGuardrailDefaults,
    });
  });

  it('containerStopSignals must be a boolean', () => {
    const result = parseConfig('containerStopSignals: yes please\n');
    assert.ok(!result.ok && result.problems.some((p) => p.field === 'containerStopSignals' && /true or false/.test(p.message)));
  });

  it('takes the stop container\'s securityContext and user matching from the file (issue: they could not be set)', () => {
    const result = parseConfig(`
ephemeralContainer:
  image: busybox:1.36
  securityContext:
    runAsNonRoot: true
    runAsUser: 4242
    allowPrivilegeEscalation: false
    capabilities: { drop: [ALL] }
    seccompProfile: { type: RuntimeDefault }
  matchTargetUser: false
`);
    assert.ok(result.ok);
    assert.deepEqual(result.config.ephemeralContainerSecurityContext, {
      runAsNonRoot: true,
      runAsUser: 4242,
      runAsGroup: 65532,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    assert.equal(result.config.ephemeralContainerMatchTargetUser, false);
  });

  it('an empty stop-container securityContext is the restricted default, not the pod\'s settings (issue 33, defect 8)', () => {
    const result = parseConfig('ephemeralContainer: { image: b, securityContext: {} }');
    assert.ok(result.ok);
    assert.deepEqual(result.config.ephemeralContainerSecurityContext, {
      runAsNonRoot: true,
      runAsUser: 65532,
      runAsGroup: 65532,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
  });

  it('a partial stop-container securityContext is laid over the restricted default', () => {
    const result = parseConfig('ephemeralContainer: { image: b, securityContext: { readOnlyRootFilesystem: true, runAsUser: 10001, capabilities: { add: [NET_BIND_SERVICE] } } }');
    assert.ok(result.ok);
    assert.deepEqual(result.config.ephemeralContainerSecurityContext, {
      runAsNonRoot: true,
      runAsUser: 10001,
      runAsGroup: 65532,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] },
      seccompProfile: { type: 'RuntimeDefault' },
      readOnlyRootFilesystem: true,
    });
  });

  it('refuses a stop-container securityContext weaker than Pod Security "restricted", naming each field', () => {
    const weak = parseConfig(`
ephemeralContainer:
  image: b
  securityContext:
    privileged: true
    allowPrivilegeEscalation: true
    runAsNonRoot: false
    runAsUser: 0
    capabilities: { drop: [NET_RAW], add: [SYS_ADMIN] }
    seccompProfile: { type: Unconfined }
    procMount: Unmasked
    seLinuxOptions: { type: spc_t }
    appArmorProfile: { type: Unconfined }
`);
    assert.deepEqual(problems(weak), [
      'ephemeralContainer.securityContext.privileged',
      'ephemeralContainer.securityContext.allowPrivilegeEscalation',
      'ephemeralContainer.securityContext.runAsNonRoot',
      'ephemeralContainer.securityContext.runAsUser',
      'ephemeralContainer.securityContext.capabilities.drop',
      'ephemeralContainer.securityContext.capabilities.add[0]',
      'ephemeralContainer.securityContext.seccompProfile.type',
      'ephemeralContainer.securityContext.procMount',
      'ephemeralContainer.securityContext.seLinuxOptions.type',
      'ephemeralContainer.securityContext.appArmorProfile.type',
    ]);
    assert.ok(!weak.ok && weak.problems.every((p) => /Pod Security "restricted"/.test(p.message)));
  });

  it('the shipped example, with its securityContext line uncommented as written, keeps the restricted default', () => {
    const uncommented = exampleConfig.replace(/^# (ephemeralContainer:)$/m, '$1').replace(/^# {3}(image: .*)$/m, '  $1').replace(/^# {3}# (securityContext:.*)$/m, '  $1').replace(/^# {3}# {3}(\S.*)$/gm, '    $1');
    assert.match(uncommented, /^ {2}securityContext:/m, 'the example names a securityContext');
    const result = parseConfig(uncommented);
    assert.ok(result.ok, formatProblems(result.ok ? [] : result.problems));
    const sc = result.config.ephemeralContainerSecurityContext;
    assert.equal(sc?.runAsNonRoot, true);
    assert.equal(sc?.allowPrivilegeEscalation, false);
    assert.deepEqual(sc?.capabilities?.drop, ['ALL']);
    assert.equal(sc?.seccompProfile?.type, 'RuntimeDefault');
  });

  it('names a bad stop-container securityContext field', () => {
    assert.deepEqual(problems(parseConfig('ephemeralContainer: { image: b, securityContext: { runAsUser: root } }')), ['ephemeralContainer.securityContext.runAsUser']);
    assert.deepEqual(problems(parseConfig('ephemeralContainer: { image: b, securityContext: { hostPID: true } }')), ['ephemeralContainer.securityContext.hostPID']);
    assert.deepEqual(problems(parseConfig('ephemeralContainer: { image: b, matchTargetUser: "yes" }')), ['ephemeralContainer.matchTargetUser']);
  });

  it('reads managedPodsOnly (default false) and names a value that is not a boolean', () => {
    assert.equal(defaultConfig.managedPodsOnly, false);
    const result = parseConfig('managedPodsOnly: true\n');
    assert.ok(result.ok && result.config.managedPodsOnly === true);
    assert.deepEqual(problems(parseConfig('managedPodsOnly: "yes"\n')), ['managedPodsOnly']);
  });

  describe('nodeReadiness.clusterGuardrails: limits on taints every NodeReadinessRule adds together', () => {
    it('defaults to the node-readiness library\'s defaults when absent', () => {
      const result = parseConfig('keystoneLimit: 1\n');
      assert.ok(result.ok);
      assert.deepEqual(result.config.nodeReadinessClusterGuardrails, { additionsPerMinute: 120, additionBurst: 20, maxTaintedPercent: 50 });
      assert.deepEqual(result.config.nodeReadinessClusterGuardrails, ClusterGuardrailDefaults);
    });

    it('reads every field, each left out taking its default', () => {
      const all = parseConfig('nodeReadiness:\n  clusterGuardrails:\n    additionsPerMinute: 30\n    additionBurst: 5\n    maxTaintedPercent: 0\n');
      assert.ok(all.ok);
      assert.deepEqual(all.config.nodeReadinessClusterGuardrails, { additionsPerMinute: 30, additionBurst: 5, maxTaintedPercent: 0 });
      const one = parseConfig('nodeReadiness: { clusterGuardrails: { additionBurst: 40 } }');
      assert.ok(one.ok);
      assert.deepEqual(one.config.nodeReadinessClusterGuardrails, { additionsPerMinute: 120, additionBurst: 40, maxTaintedPercent: 50 });
      const empty = parseConfig('nodeReadiness: {}');
      assert.ok(empty.ok);
      assert.deepEqual(empty.config.nodeReadinessClusterGuardrails, ClusterGuardrailDefaults);
    });

    it('names each value that is not an integer within its bounds', () => {
      const bad = [
        ['additionsPerMinute: 0', 'additionsPerMinute', /from 1 to 600000/],
        ['additionsPerMinute: 600001', 'additionsPerMinute', /from 1 to 600000/],
        ['additionsPerMinute: 1.5', 'additionsPerMinute', /integer/],
        ['additionBurst: "20"', 'additionBurst', /from 1 to 100000/],
        ['additionBurst: 0', 'additionBurst', /from 1 to 100000/],
        ['maxTaintedPercent: -1', 'maxTaintedPercent', /from 0 to 100/],
        ['maxTaintedPercent: 101', 'maxTaintedPercent', /from 0 to 100/],
        ['maxTaintedPercent: .nan', 'maxTaintedPercent', /from 0 to 100/],
      ] as const;
      for (const [line, name, message] of bad) {
        const result = parseConfig(`nodeReadiness:\n  clusterGuardrails:\n    ${line}\n`);
        assert.deepEqual(problems(result), [`nodeReadiness.clusterGuardrails.${name}`], line);
        assert.ok(!result.ok && message.test(result.problems[0]?.message ?? ''), line);
      }
    });

    it('names an unknown field at either level, and a section that is not a mapping', () => {
      assert.deepEqual(problems(parseConfig('nodeReadiness: { clusterGuardrails: { maxTaintedPercents: 10 } }')), ['nodeReadiness.clusterGuardrails.maxTaintedPercents']);
      assert.deepEqual(problems(parseConfig('nodeReadiness: { additionBurst: 10 }')), ['nodeReadiness.additionBurst']);
      assert.deepEqual(problems(parseConfig('nodeReadiness: [1]')), ['nodeReadiness']);
      assert.deepEqual(problems(parseConfig('nodeReadiness: { clusterGuardrails: 50 }')), ['nodeReadiness.clusterGuardrails']);
    });

    it('reports every bad field at once', () => {
      assert.deepEqual(problems(parseConfig('nodeReadiness: { clusterGuardrails: { additionsPerMinute: -1, additionBurst: 0, maxTaintedPercent: 200 } }')), [
        'nodeReadiness.clusterGuardrails.additionsPerMinute',
        'nodeReadiness.clusterGuardrails.additionBurst',
        'nodeReadiness.clusterGuardrails.maxTaintedPercent',
      ]);
    });

    it('the shipped example sets the defaults, so uncommenting nothing changes nothing', () => {
      const result = parseConfig(exampleConfig);
      assert.ok(result.ok, formatProblems(result.ok ? [] : result.problems));
      assert.match(exampleConfig, /^nodeReadiness:\n {2}clusterGuardrails:/m);
      assert.deepEqual(result.config.nodeReadinessClusterGuardrails, ClusterGuardrailDefaults);
    });
  });

  it('names an unknown field instead of ignoring it', () => {
    assert.deepEqual(problems(parseConfig('keystonelimit: 2')), ['keystonelimit']);
  });

  it('names the argument of an exec command that is not a string', () => {
    assert.deepEqual(problems(parseConfig('execCommands:\n  drain: ["kill", 1]')), ['execCommands.drain[1]']);
  });

  it('refuses a shell line where an argv is expected', () => {
    assert.deepEqual(problems(parseConfig('execCommands:\n  drain: "kill -TERM 1"')), ['execCommands.drain']);
  });

  it('refuses a command name that exec:<name> could not refer to', () => {
    assert.deepEqual(problems(parseConfig('execCommands:\n  Drain_All: ["true"]')), ['execCommands.Drain_All']);
  });

  it('refuses a keystone limit below 1', () => {
    assert.deepEqual(problems(parseConfig('keystoneLimit: 0')), ['keystoneLimit']);
  });

  it('refuses an unknown strategy', () => {
    assert.deepEqual(problems(parseConfig('defaultStrategy: kill')), ['defaultStrategy']);
  });

  it('requires an image when the ephemeral strategy is the default', () => {
    assert.deepEqual(problems(parseConfig('defaultStrategy: ephemeral')), ['ephemeralContainer.image']);
  });

  it('names the namespace that is not a valid name', () => {
    assert.deepEqual(problems(parseConfig('namespaces: [ok, Not_OK]')), ['namespaces[1]']);
  });

  it('reports every problem at once', () => {
    assert.deepEqual(problems(parseConfig('keystoneLimit: -1\ndefaultStrategy: 3\nnamespaces: x')), ['keystoneLimit', 'defaultStrategy', 'namespaces']);
  });

  it('reports a YAML syntax error without throwing', () => {
    assert.deepEqual(problems(parseConfig('keystoneLimit: [1')), ['']);
  });

  it('refuses a document that is not a mapping', () => {
    assert.deepEqual(problems(parseConfig('- a\n- b')), ['']);
  });
});
