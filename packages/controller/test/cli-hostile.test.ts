import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import fc from 'fast-check';
import { resourcePath, shellQuote } from '@podlife/core';
import { FakeApiServer } from '@podlife/core/testing';
import { podExplanation, type PodEvent } from '@podlife/pod-conditions';
import { explainNode, nodeReadinessRule, type NodeReadinessRule } from '@podlife/node-readiness';
import type { ExplainArgs, ExplainNodeArgs, ExplainUnlabelledArgs, NodesArgs, PodsArgs } from '../src/cli/args.js';
import { complete, completionScript, type CompletionLookups } from '../src/cli/completion.js';
import { podlifeNotes, renderExplained, runExplain } from '../src/cli/explain.js';
import { listBounds } from '../src/cli/kubeconfig.js';
import { fetchRules, nodesTable, rejectedRuleLine, renderNodeText, runExplainNode, runNodes } from '../src/cli/nodes.js';
import { renderTable } from '../src/cli/output.js';
import { podRow, podsTable, runPods } from '../src/cli/pods.js';
import { terminalText } from '../src/cli/terminal.js';
import { renderUnlabelled, runExplainUnlabelled, type UnlabelledReport } from '../src/cli/unlabelled.js';

/**
 * What the CLI must never print from cluster text: a C0 control other than the line feed its own
 * layout emits, DEL, a C1 control, a line or paragraph separator, or a bidirectional formatting
 * character.
 */
const FORBIDDEN = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;
const assertPrintable = (text: string) => assert.doesNotMatch(text, FORBIDDEN, JSON.stringify(text));

/** Sequences seen in captured messages: a window title, a screen clear, a clipboard write (OSC 52), 8-bit CSI, a bidi override. */
const ESCAPES = '\x1b]0;pwned\x07\x1b[2J\x1b]52;c;Y3VybCB4IHwgc2g=\x07\x9b31m\u202etxt.exe\r\n\tend';

/** What a command wrote to stdout and stderr. */
function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (t: string) => void out.push(t), err: (t: string) => void err.push(t), columns: undefined }, stdout: () => out.join(''), stderr: () => err.join('') };
}

function kubeconfigFor(dir: string, server: string, namespace = 'shop'): string {
  const file = join(dir, `kubeconfig-${Math.random().toString(36).slice(2)}`);
  writeFileSync(
    file,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: { server, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'u', user: {} }],
      contexts: [{ name: 'c', context: { cluster: 'c', user: 'u', namespace } }],
      'current-context': 'c',
    }),
  );
  return file;
}

const T0 = Date.parse('2024-05-01T10:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString() as unknown as Date;

/** A pod whose sidecar crash-loops, with `text` wherever a tenant or its containers can write. */
function hostilePod(text: string, name = 'web-0'): V1Pod {
  return {
    metadata: {
      name,
      namespace: 'shop',
      creationTimestamp: iso(T0 - 120_000),
      annotations: { 'role.podlife.dev/proxy': 'sidecar', 'stop.podlife.dev/proxy': `exec:${text}`, 'example.com/note': text },
    },
    spec: { nodeName: `node-${text}`, containers: [{ name: 'app' }, { name: 'proxy' }] },
    status: {
      phase: 'Running',
      conditions: [
        { type: 'PodScheduled', status: 'True', lastTransitionTime: iso(T0 - 119_000) },
        { type: 'podlife.dev/LifecycleValid', status: 'False', reason: 'Invalid', message: `annotation value ${text}`, lastTransitionTime: iso(T0 - 100_000) },
      ],
      containerStatuses: [
        { name: 'app', image: 'app', imageID: 'x', ready: true, restartCount: 0, state: { running: { startedAt: iso(T0 - 90_000) } } },
        {
          name: 'proxy',
          image: 'proxy',
          imageID: 'x',
          ready: false,
          restartCount: 3,
          state: { waiting: { reason: 'CrashLoopBackOff', message: `back-off restarting ${text}` } },
          lastState: { terminated: { exitCode: 1, reason: 'Error', message: text, finishedAt: iso(T0 - 10_000) } },
        },
      ],
    },
  };
}

function hostileEvents(text: string): PodEvent[] {
  return [{ reason: 'FailedPostStartHook', type: 'Warning', message: `exec stderr: ${text}`, lastTimestamp: iso(T0 - 5000) } as unknown as PodEvent];
}

/** A node held by a zero-config gate, with `text` wherever its kubelet can write. */
function hostileNode(text: string, name = 'worker-1'): V1Node {
  return {
    metadata: { name, labels: { pool: text } },
    spec: { taints: [{ key: 'readiness.k8s.io/NetworkReady', effect: 'NoSchedule', value: text }] },
    status: { conditions: [{ type: 'NetworkReady', status: 'False', reason: text, message: text, lastTransitionTime: iso(T0 - 60_000), lastHeartbeatTime: iso(T0 - 1000) }] },
  };
}

describe('podlife CLI against hostile cluster text and a hostile API server', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'podlife-hostile-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  describe('control characters from the cluster are shown escaped, never sent to the terminal', () => {
    it('terminalText: line breaks and tabs become spaces, other controls are escaped as Go quotes them', () => {
      assert.equal(terminalText('a\x1b]0;t\x07b\nc\td\r'), 'a\\x1b]0;t\\x07b c d ');
      assert.equal(terminalText('\x9b2J \u202eexe \x7f \x00'), '\\u009b2J \\u202eexe \\x7f \\x00');
      assert.equal(terminalText('plain, é, 漢字, 🙂'), 'plain, é, 漢字, 🙂');
    });

    let server: FakeApiServer;
    let kubeconfig: string;
    before(async () => {
      server = await FakeApiServer.start();
      const client = server.client();
      const pod = hostilePod(ESCAPES);
      await client.create(resourcePath({ version: 'v1', resource: 'pods', namespace: 'shop' }), pod);
      await client.create(resourcePath({ version: 'v1', resource: 'events', namespace: 'shop' }), {
        metadata: { name: 'web-0.1' },
        involvedObject: { kind: 'Pod', name: 'web-0', namespace: 'shop' },
        ...hostileEvents(ESCAPES)[0],
      });
      await client.create(resourcePath({ version: 'v1', resource: 'nodes' }), hostileNode(ESCAPES));
      kubeconfig = kubeconfigFor(dir, server.url);
    });
    after(() => server?.stop());

    it('podlife explain <pod>: termination message, annotation values and exec stderr from Events, escaped; JSON exact', async () => {
      const written: string[] = [];
      const out = { write: (t: string) => void written.push(t), isTTY: false, columns: undefined };
      const args: ExplainArgs = { command: 'explain', pod: 'web-0', output: 'wide', watch: false, ascii: false, kubeconfig };
      assert.equal(await runExplain(args, out), 0);
      const text = written.join('');
      assertPrintable(text);
      assert.match(text, /\\x1b\]0;pwned\\x07/);
      const json: string[] = [];
      assert.equal(await runExplain({ ...args, output: 'json' }, { ...out, write: (t) => void json.push(t) }), 0);
      assert.ok(JSON.stringify(JSON.parse(json.join(''))).includes(JSON.stringify(ESCAPES).slice(1, -1)), 'the JSON carries the message exactly');
    });

    it('podlife pods -o wide: condition messages, stop specs and the node name, escaped', async () => {
      const c = capture();
      assert.equal(await runPods({ command: 'pods', output: 'wide', allNamespaces: false, kubeconfig } satisfies PodsArgs, c.io), 0);
      assertPrintable(c.stdout() + c.stderr());
      assert.match(c.stdout(), /node-\\x1b\]0;pwned/);
      assert.equal(c.stdout().trimEnd().split('\n').length, 2, 'a header and one row: no line break from the cluster');
    });

    it('podlife nodes and explain node: node condition messages and taint values, escaped', async () => {
      for (const output of ['text', 'wide'] as const) {
        const c = capture();
        assert.equal(await runNodes({ command: 'nodes', output, kubeconfig } satisfies NodesArgs, c.io), 0);
        assertPrintable(c.stdout() + c.stderr());
        const e = capture();
        assert.equal(await runExplainNode({ command: 'explain-node', node: 'worker-1', output, kubeconfig } satisfies ExplainNodeArgs, e.io), 0);
        assertPrintable(e.stdout() + e.stderr());
        assert.match(e.stdout(), /\\x1b\[2J/);
      }
    });

    it('a rule not in force, on stderr, is escaped too', () => {
      assertPrintable(rejectedRuleLine(`r${ESCAPES}`, { reason: 'Invalid', message: ESCAPES }));
    });
  });

  describe('commands printed for pasting quote every name for a POSIX shell', () => {
    /** Runs the printed command in sh with `printf` in place of kubectl: the arguments it would get. */
    function argumentsOf(printed: string): string[] {
      const command = printed.replace(/ \\\n */g, ' ').trim();
      assert.match(command, /^kubectl /);
      // No PATH: were a name to break out of its quotes, what it names would not be found.
      return execFileSync('/bin/sh', ['-c', `kubectl() { printf '%s\\n' "$@"; }; ${command}`], { encoding: 'utf8', env: { PATH: dir } }).split('\n').slice(0, -1);
    }

    it('shellQuote: one argument for any string without control characters', () => {
      fc.assert(
        fc.property(fc.array(fc.string({ unit: fc.constantFrom('a', ' ', "'", '"', ';', '|', '$', '(', ')', '`', '*', '?', '#', '\\', '&', '~', '!', '{', '}', '<', '-', '=') }), { minLength: 1, maxLength: 4 }), (words) => {
          const nonEmpty = words.map((w) => `x${w}`);
          assert.deepEqual(argumentsOf(`kubectl ${nonEmpty.map(shellQuote).join(' ')}`), nonEmpty);
        }),
        { numRuns: 40 },
      );
    });

    let server: FakeApiServer;
    let kubeconfig: string;
    before(async () => {
      server = await FakeApiServer.start();
      const client = server.client();
      const annotations = { 'role.podlife.dev/proxy': 'sidecar' };
      for (const name of ['a; curl x | sh #', "it's", 'web-0', '--all', 'x=y', `esc${ESCAPES}`]) {
        await client.create(resourcePath({ version: 'v1', resource: 'pods', namespace: 'shop' }), { metadata: { name, annotations }, spec: { containers: [{ name: 'proxy' }] } });
      }
      kubeconfig = kubeconfigFor(dir, server.url);
    });
    after(() => server?.stop());

    it('explain --unlabelled: a name like `a; curl x | sh #` pastes as one argument; names kubectl or the terminal would misread are in no command', async () => {
      const c = capture();
      const args: ExplainUnlabelledArgs = { command: 'explain-unlabelled', output: 'text', allNamespaces: false, kubeconfig, width: 60 };
      assert.equal(await runExplainUnlabelled(args, c.io), 0);
      const text = c.stdout();
      assertPrintable(text);
      const command = text.slice(text.indexOf('  kubectl')).split('\n(')[0] ?? '';
      assert.deepEqual(argumentsOf(command), ['label', 'pod', '-n', 'shop', 'a; curl x | sh #', "it's", 'web-0', 'podlife.dev/managed=true']);
      assert.match(text, /\(3 pods are in no command: /);
      for (const listed of ['shop/--all', 'shop/x=y', 'shop/esc\\x1b]0;pwned']) assert.ok(text.includes(listed), listed);
    });

    it('the label hint of explain <pod> names the namespace (-n) and pastes as one command', () => {
      const pod: V1Pod = { metadata: { name: 'a; curl x | sh #', namespace: 'team a', annotations: { 'role.podlife.dev/proxy': 'sidecar' } } };
      const note = podlifeNotes(pod)[0] ?? '';
      const hint = /\((kubectl label .*)\)$/.exec(note)?.[1] ?? '';
      assert.deepEqual(argumentsOf(hint), ['label', 'pod', '-n', 'team a', 'a; curl x | sh #', 'podlife.dev/managed=true']);
    });
  });

  describe('completion never word-splits or globs names from the cluster', () => {
    const hostile: CompletionLookups = {
      pods: async () => ['web-0', '*', 'a b', 'x\ny', `e${ESCAPES}`, '$(reboot)', 'web-1'],
      nodes: async () => ['worker-1', '*'],
      namespaces: async () => ['shop', 'a;b'],
      contexts: () => ['prod', 'arn:aws:eks:eu-west-1:1:cluster/prod', 'my context'],
    };

    it('offers only names that are one shell word as they are', async () => {
      assert.deepEqual(await complete(['explain', ''], hostile), ['node', 'web-0', 'web-1']);
      assert.deepEqual(await complete(['explain', 'node', ''], hostile), ['worker-1']);
      assert.deepEqual(await complete(['pods', '-n', ''], hostile), ['shop']);
      assert.deepEqual(await complete(['pods', '--context', ''], hostile), ['prod', 'arn:aws:eks:eu-west-1:1:cluster/prod']);
    });

    it('the bash script takes each line as one candidate, unglobbed', function () {
      try {
        execFileSync('bash', ['--version']);
      } catch {
        this.skip();
      }
      const prog = join(dir, 'fake-podlife');
      writeFileSync(prog, `#!/bin/sh\nprintf '%s\\n' 'a b' '*' 'web-0' ':4'\n`, { mode: 0o755 });
      const script = `${completionScript('bash')}\ncd "${dir}"\nCOMP_WORDS=("${prog}" explain "")\nCOMP_CWORD=2\n_podlife_complete\nprintf '[%s]\\n' "\${COMPREPLY[@]}"\n`;
      assert.equal(execFileSync('bash', ['-c', script], { encoding: 'utf8' }), '[a b]\n[*]\n[web-0]\n');
    });
  });

  describe('bounds against an API server that never stops', () => {
    let server: http.Server;
    let url = '';
    let handler: (req: http.IncomingMessage, res: http.ServerResponse) => void = () => undefined;
    const requests: string[] = [];
    before(async () => {
      server = http.createServer((req, res) => {
        requests.push(req.url ?? '');
        handler(req, res);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(() => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    });
    const json = (res: http.ServerResponse, body: unknown) => {
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify(body));
    };
    const nodes = (): NodesArgs => ({ command: 'nodes', output: 'text', kubeconfig: kubeconfigFor(dir, url) });

    it('podlife nodes: a continue token that never ends is an error after listBounds.maxPages pages', async () => {
      requests.length = 0;
      handler = (req, res) => json(res, { kind: 'List', metadata: { continue: `t${requests.length}` }, items: [] });
      await assert.rejects(runNodes(nodes(), capture().io), /listing \/api\/v1\/nodes: the API server still had more after 500 pages of 500/);
      assert.equal(requests.filter((r) => r.startsWith('/api/v1/nodes')).length, listBounds.maxPages);
    });

    it('podlife pods: a page with more items than asked for is an error', async () => {
      handler = (_req, res) => json(res, { kind: 'List', metadata: {}, items: Array.from({ length: listBounds.pageSize + 1 }, () => ({})) });
      await assert.rejects(runPods({ command: 'pods', output: 'text', allNamespaces: true, kubeconfig: kubeconfigFor(dir, url) }, capture().io), /sent 501 items in a page of at most 500/);
    });

    it('podlife nodes: an answer that never ends is cut at the byte limit, with an error naming the request', async () => {
      let sent = 0;
      handler = (req, res) => {
        if (!req.url?.startsWith('/api/v1/nodes')) return json(res, { kind: 'List', metadata: {}, items: [] });
        res.setHeader('Content-Type', 'application/json');
        const chunk = Buffer.alloc(1 << 20, 0x20);
        const more = () => {
          while (!res.destroyed && res.write(chunk)) sent += chunk.length;
          if (!res.destroyed) res.once('drain', more);
        };
        res.on('close', () => res.removeAllListeners('drain'));
        more();
      };
      await assert.rejects(runNodes(nodes(), capture().io), /GET \/api\/v1\/nodes: the answer is larger than 128 MiB/);
      assert.ok(sent < 200 * (1 << 20), `${sent} bytes sent`);
    });

    it('podlife nodes: a taint without a key, and other malformed parts of nodes and rules, render without throwing', async () => {
      handler = (req, res) =>
        req.url?.startsWith('/api/v1/nodes')
          ? json(res, {
              kind: 'List',
              metadata: {},
              items: [
                { metadata: { name: 'bad' }, spec: { taints: [{ effect: 'NoSchedule' }, null, { key: 7 }, { key: 'readiness.k8s.io/CNIReady', effect: 'NoSchedule' }] }, status: { conditions: [{ status: 'True' }, 'x'] } },
                { metadata: 'x', spec: 5, status: null },
              ],
            })
          : json(res, { kind: 'List', metadata: {}, items: [{ metadata: { name: 'broken' }, spec: { conditions: {}, taint: [] } }, null] });
      for (const output of ['text', 'wide', 'json'] as const) {
        const c = capture();
        assert.equal(await runNodes({ ...nodes(), output }, c.io), 0);
        if (output !== 'json') assert.match(c.stdout(), /^bad +readiness\.k8s\.io\/CNIReady \(missing\) +readiness\.k8s\.io\/CNIReady:NoSchedule/m);
        assert.match(c.stderr(), /^podlife: NodeReadinessRule broken: .*; left out\npodlife: NodeReadinessRule \(no name\): .*; left out\n$/);
      }
    });
  });

  describe('properties', () => {
    /** Any text a tenant, a kubelet or an API server can write: all of Unicode, controls often. */
    const clusterText = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc.string({ unit: fc.constantFrom('\x1b', '\x9b', '\x07', '\x00', '\x7f', '\x85', '\n', '\r', '\t', '\v', '\u2028', '\u202e', '\u2066', ']', '[', ';', '2', 'J', 'a', ' ', 'é', '漢'), maxLength: 40 }),
    );
    const rules: NodeReadinessRule[] = [
      nodeReadinessRule('cni', { conditions: [{ type: 'CNIReady', requiredStatus: 'True' }], taint: { key: 'readiness.k8s.io/CNIReady', effect: 'NoSchedule' }, enforcementMode: 'continuous', nodeSelector: { matchLabels: { pool: 'gpu' } } } as never),
    ];
    const lineCount = (text: string) => text.split('\n').length;

    /**
     * Everything the CLI renders as text for a pod and a node carrying `text`: explain (text and
     * wide), pods (text and wide, one namespace and all), nodes (text and wide), explain node,
     * explain --unlabelled, and the stderr line of a rule not in force.
     */
    function renderAll(text: string): Record<string, string> {
      const pod = hostilePod(text, `web-${text}`);
      pod.metadata!.namespace = `ns-${text}`;
      const explained = { explanation: podExplanation(pod, hostileEvents(text), T0), notes: podlifeNotes(pod) };
      const rows = [podRow(pod, T0)];
      const node = hostileNode(text, `worker-${text}`);
      const report: UnlabelledReport = { label: 'podlife.dev/managed=true', count: 2, items: [{ namespace: `ns-${text}`, name: `web-${text}` }, { namespace: 'shop', name: text }] };
      return {
        explain: renderExplained(explained, { output: 'text', compact: false, width: 80 }),
        'explain -o wide': renderExplained(explained, { output: 'wide', compact: false, width: 120 }),
        pods: renderTable(podsTable(rows, { allNamespaces: true, wide: false }), 80),
        'pods -o wide': renderTable(podsTable(rows, { allNamespaces: true, wide: true })),
        nodes: renderTable(nodesTable([node], rules, T0, false), 80),
        'nodes -o wide': renderTable(nodesTable([node], rules, T0, true)),
        'explain node': renderNodeText(explainNode(node, rules, T0, { zeroConfig: true }), 'text', 80),
        'explain node -o wide': renderNodeText(explainNode(node, rules, T0, { zeroConfig: true }), 'wide', 80),
        'explain --unlabelled': renderUnlabelled(report, { output: 'text', width: 80 }),
        'explain --unlabelled -o wide': renderUnlabelled(report, { output: 'wide', width: 80 }),
        'rule not in force': rejectedRuleLine(`rule-${text}`, { reason: text, message: text }),
      };
    }

    it('CLI rendering never emits a C0 or C1 control character (nor DEL or a bidi control) from cluster text; only its own layout breaks lines', () => {
      const plain = renderAll('x');
      fc.assert(
        fc.property(clusterText, (text) => {
          for (const [what, out] of Object.entries(renderAll(text))) {
            assert.doesNotMatch(out, FORBIDDEN, `${what}: ${JSON.stringify(out)}`);
            // Unfitted output (-o wide, one line a row) has the lines of the same objects with plain text in them.
            if ((what.includes('-o wide') && !what.includes('unlabelled')) || what === 'rule not in force') assert.equal(lineCount(out), lineCount(plain[what] ?? ''), what);
          }
          // explain --unlabelled names a pod a line (whether or not a command can name it).
          const listed = renderAll(text)['explain --unlabelled -o wide']?.split('\n').slice(0, 2);
          assert.deepEqual(listed, [terminalText(`ns-${text}/web-${text}`), terminalText(`shop/${text}`)]);
        }),
        { numRuns: 300 },
      );
    });

    it('JSON output keeps cluster text exact', () => {
      fc.assert(
        fc.property(clusterText, (text) => {
          const pod = hostilePod(text);
          const data = JSON.parse(renderExplained({ explanation: podExplanation(pod, hostileEvents(text), T0), notes: [] }, { output: 'json', compact: true, width: 80 })) as { pod: { node: string } };
          assert.equal(data.pod.node, `node-${text}`);
        }),
        { numRuns: 100 },
      );
    });

    it('malformed NodeReadinessRules are left out, each with why; the rest still judge the nodes', async () => {
      const anyRule = fc.oneof(fc.anything(), fc.record({ metadata: fc.oneof(fc.anything(), fc.record({ name: fc.anything() })), spec: fc.oneof(fc.anything(), fc.record({ conditions: fc.anything(), taint: fc.anything(), enforcementMode: fc.anything(), nodeSelector: fc.anything() })) }));
      await fc.assert(
        fc.asyncProperty(fc.array(anyRule, { maxLength: 4 }), async (listed) => {
          const api = { request: async <T>() => ({ items: [...listed, ...rules] }) as T, get: async <T>() => ({}) as T };
          const fetched = await fetchRules(api);
          assert.equal(fetched.rules.length + fetched.unreadable.length, listed.length + rules.length);
          assert.ok(fetched.rules.includes(rules[0]!));
          assert.equal(nodesTable([hostileNode('x')], fetched.rules, T0, true).length, 2);
        }),
        { numRuns: 200 },
      );
    });

    it('a malformed node never throws: one row per node, whatever its taints, conditions, labels and annotations hold', () => {
      const part = fc.oneof(fc.anything(), fc.array(fc.oneof(fc.anything(), fc.record({ key: fc.anything(), effect: fc.anything(), type: fc.anything(), status: fc.anything() }))));
      fc.assert(
        fc.property(fc.array(fc.record({ metadata: fc.oneof(fc.anything(), fc.record({ name: fc.anything(), labels: fc.anything(), annotations: fc.anything() })), spec: fc.oneof(fc.anything(), fc.record({ taints: part })), status: fc.oneof(fc.anything(), fc.record({ conditions: part })) }), { maxLength: 4 }), (raw) => {
          for (const wide of [false, true]) {
            const rows = nodesTable(raw, rules, T0, wide);
            assert.equal(rows.length, raw.length + 1);
            assertPrintable(renderTable(rows, wide ? undefined : 80));
          }
        }),
        { numRuns: 300 },
      );
    });
  });
});
