import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { COMMAND_NAMES, commandUsageFor, parseCommandLine, usageErrorFor, usageFor, type ParsedArgs } from '../src/cli/args.js';

const parse = (line: string): ParsedArgs => parseCommandLine(line.split(' ').filter((w) => w !== ''));

function errorOf(line: string): string {
  const r = parse(line);
  assert.equal(r.command, 'error', `expected an error for "${line}", got ${JSON.stringify(r)}`);
  return r.command === 'error' ? r.message : '';
}

describe('podlife command line', () => {
  describe('help', () => {
    it('no arguments at all is help', () => assert.deepEqual(parse(''), { command: 'help' }));
    it('-h and --help are help, whatever else is given', () => {
      assert.deepEqual(parse('-h'), { command: 'help' });
      assert.deepEqual(parse('explain node --help'), { command: 'help', topic: 'explain' });
    });
    it('<command> --help is that command\'s help alone', () => {
      for (const command of COMMAND_NAMES) assert.deepEqual(parse(`${command} --help`), { command: 'help', topic: command });
      const explain = commandUsageFor('podlife', 'explain');
      assert.match(explain, /podlife explain <pod>/);
      assert.match(explain, /--watch/);
      assert.doesNotMatch(explain, /podlife nodes|completion <shell>/);
      assert.doesNotMatch(commandUsageFor('podlife', 'nodes'), /--watch|--namespace/);
    });
    it('--version alone is the version; with a command it is an error', () => {
      assert.deepEqual(parse('--version'), { command: 'version' });
      assert.match(errorOf('explain web-0 --version'), /--version takes no command/);
    });
    it('every command and option is in the usage', () => {
      for (const command of COMMAND_NAMES) assert.match(usageFor('podlife'), new RegExp(`^  podlife ${command}`, 'm'));
      assert.match(usageFor('podlife'), /--version/);
    });
  });

  describe('usage errors', () => {
    it('carry the command they were for, also when the flag itself fails to parse', () => {
      assert.equal((parse('explain web-0 --width 3') as { topic?: string }).topic, 'explain');
      assert.equal((parse('pods --selector a=b') as { topic?: string }).topic, 'pods');
      assert.equal((parse('describe web-0') as { topic?: string }).topic, undefined);
    });
    it('print one line naming the problem and one naming the help', () => {
      assert.equal(usageErrorFor('podlife', { message: 'completion needs a shell: bash or zsh', topic: 'completion' }), "podlife: completion needs a shell: bash or zsh\nRun 'podlife completion --help' for usage.");
      assert.equal(usageErrorFor('kubectl podlife', { message: 'unknown command "x"' }), "kubectl podlife: unknown command \"x\"\nRun 'kubectl podlife --help' for usage.");
    });
  });

  describe('the program', function () {
    this.timeout(30_000);
    const cli = new URL('../src/cli/podlife.ts', import.meta.url).pathname;
    const run = (...args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', '--conditions=@podlife/source', cli, ...args], { encoding: 'utf8' });
    it('--version prints the package version', () => {
      const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
      assert.equal(execFileSync(process.execPath, ['--import', 'tsx', '--conditions=@podlife/source', cli, '--version'], { encoding: 'utf8' }), `${version}\n`);
    });
    it('explain --help prints the help of explain, on stdout, exit 0', () => {
      const r = run('explain', '--help');
      assert.equal(r.status, 0);
      assert.equal(r.stdout, `${commandUsageFor('podlife', 'explain')}\n`);
    });
    it('a usage error prints two lines on stderr, exit 2, no usage text', () => {
      const r = run('explain', 'web-0', '-o', 'name');
      assert.equal(r.status, 2);
      assert.equal(r.stdout, '');
      assert.equal(r.stderr, "podlife: --output \"name\": use text, wide, json, yaml\nRun 'podlife explain --help' for usage.\n");
    });
  });

  describe('explain <pod>', () => {
    it('a bare name is a pod, with text output and no watch by default', () =>
      assert.deepEqual(parse('explain web-0'), { command: 'explain', pod: 'web-0', output: 'text', watch: false, ascii: false }));
    it('accepts pod/<name> and pods/<name>, as kubectl does', () => {
      assert.equal((parse('explain pod/web-0') as { pod: string }).pod, 'web-0');
      assert.equal((parse('explain pods/web-0') as { pod: string }).pod, 'web-0');
    });
    it('accepts pod <name>', () => assert.equal((parse('explain pod web-0') as { pod: string }).pod, 'web-0'));
    it('takes every flag', () =>
      assert.deepEqual(parse('explain web-0 -n shop --context kind -o json -w --width 100 --ascii'), {
        command: 'explain', pod: 'web-0', namespace: 'shop', context: 'kind', output: 'json', watch: true, width: 100, ascii: true,
      }));
    it('needs a name after explain', () => assert.match(errorOf('explain'), /explain needs a pod or node/));
    it('needs a name after pod/', () => assert.match(errorOf('explain pod/'), /needs a pod name after the slash/));
    it('needs a name after pod', () => assert.match(errorOf('explain pod'), /explain pod needs a pod name/));
    it('refuses a second name', () => assert.match(errorOf('explain web-0 web-1'), /unexpected argument "web-1"/));
    it('refuses an argument after pod/<name>', () => assert.match(errorOf('explain pod/web-0 extra'), /unexpected argument "extra"/));
    it('refuses a width that is not a whole number', () => assert.match(errorOf('explain web-0 --width wide'), /--width "wide"/));
    it('refuses a width under 40 columns', () => assert.match(errorOf('explain web-0 --width 39'), /at least 40/));
  });

  describe('explain node <name>', () => {
    it('node <name> explains a node', () => assert.deepEqual(parse('explain node worker-1'), { command: 'explain-node', node: 'worker-1', output: 'text' }));
    it('accepts node/<name> and nodes/<name>', () => {
      assert.deepEqual(parse('explain node/worker-1'), { command: 'explain-node', node: 'worker-1', output: 'text' });
      assert.deepEqual(parse('explain nodes/worker-1'), { command: 'explain-node', node: 'worker-1', output: 'text' });
    });
    it('takes --context and --output', () =>
      assert.deepEqual(parse('explain node worker-1 --context prod -o json'), { command: 'explain-node', node: 'worker-1', context: 'prod', output: 'json' }));
    it('needs a name after node, and says how to name a pod called node', () => {
      const message = errorOf('explain node');
      assert.match(message, /explain node needs a node name/);
      assert.match(message, /pod\/node/);
    });
    it('needs a name after node/', () => assert.match(errorOf('explain node/'), /needs a node name after the slash/));
    it('refuses a second name', () => assert.match(errorOf('explain node worker-1 worker-2'), /unexpected argument "worker-2"/));
    it('refuses an argument after node/<name>', () => assert.match(errorOf('explain node/worker-1 worker-2'), /unexpected argument "worker-2"/));
    it('refuses a namespace: nodes are cluster-scoped', () => assert.match(errorOf('explain node worker-1 -n shop'), /namespace \(nodes are cluster-scoped\): only for podlife explain <pod>/));
    it('refuses the pod-only flags, naming them', () =>
      assert.match(errorOf('explain node worker-1 --watch --ascii -A'), /-A\/--all-namespaces, --watch, --ascii: only for podlife explain <pod>/));
    it('takes --width for its text', () => assert.deepEqual(parse('explain node worker-1 --width 100'), { command: 'explain-node', node: 'worker-1', output: 'text', width: 100 }));
  });

  describe('explain --unlabelled', () => {
    it("lists in the context's namespace by default, in one with -n, in every one with -A", () => {
      assert.deepEqual(parse('explain --unlabelled'), { command: 'explain-unlabelled', output: 'text', allNamespaces: false });
      assert.deepEqual(parse('explain --unlabelled -n shop -o json'), { command: 'explain-unlabelled', output: 'json', allNamespaces: false, namespace: 'shop' });
      assert.deepEqual(parse('explain -A --unlabelled -o wide --context prod'), { command: 'explain-unlabelled', output: 'wide', allNamespaces: true, context: 'prod' });
    });
    it('--unlabeled is the same', () => assert.deepEqual(parse('explain --unlabeled -A'), parse('explain --unlabelled -A')));
    it('refuses a pod name: it lists every such pod', () => {
      assert.match(errorOf('explain --unlabelled web-0'), /unexpected argument "web-0": explain --unlabelled lists every such pod and takes no name/);
      assert.match(errorOf('explain pod/web-0 --unlabeled'), /unexpected argument "pod\/web-0": explain --unlabeled lists/);
    });
    it('refuses --watch and --ascii: it reports once', () => {
      assert.match(errorOf('explain --unlabelled --watch'), /^--watch: not with --unlabelled, which reports once/);
      assert.match(errorOf('explain --unlabelled -w --ascii'), /^--watch, --ascii: not with --unlabelled/);
    });
    it('takes -n or -A, not both', () => assert.match(errorOf('explain --unlabelled -A -n shop'), /-n\/--namespace and -A\/--all-namespaces: choose one/));
    it('only on explain: pods, nodes and explain node refuse it, pointing at explain --unlabelled', () => {
      assert.match(errorOf('pods --unlabelled'), /^--unlabelled: only for podlife explain: podlife explain --unlabelled \[-n namespace \| -A\] lists those pods/);
      assert.match(errorOf('nodes --unlabeled'), /^--unlabeled: only for podlife explain/);
      assert.match(errorOf('explain node worker-1 --unlabelled'), /unexpected argument "node"/);
    });
  });

  describe('nodes', () => {
    it('lists nodes with text output by default', () => assert.deepEqual(parse('nodes'), { command: 'nodes', output: 'text' }));
    it('takes --context and --output', () => assert.deepEqual(parse('nodes --context prod --output json'), { command: 'nodes', context: 'prod', output: 'json' }));
    it('refuses a name, pointing at explain node', () => assert.match(errorOf('nodes worker-1'), /unexpected argument "worker-1".*podlife explain node <name>/));
    it('refuses the pod-only flags', () => assert.match(errorOf('nodes -w'), /--watch: only for podlife explain <pod>/));
  });

  describe("kubectl's flags", () => {
    it('-o json, yaml, wide and text on every command', () => {
      for (const o of ['json', 'yaml', 'wide', 'text']) {
        assert.equal((parse(`explain web-0 -o ${o}`) as { output: string }).output, o);
        assert.equal((parse(`explain node w-1 -o ${o}`) as { output: string }).output, o);
        assert.equal((parse(`nodes -o ${o}`) as { output: string }).output, o);
        assert.equal((parse(`pods --output=${o}`) as { output: string }).output, o);
      }
    });
    it('--kubeconfig and --context on every command', () => {
      assert.deepEqual(parse('nodes --kubeconfig /tmp/kc --context prod'), { command: 'nodes', output: 'text', kubeconfig: '/tmp/kc', context: 'prod' });
      assert.equal((parse('explain web-0 --kubeconfig=/tmp/kc') as { kubeconfig: string }).kubeconfig, '/tmp/kc');
      assert.equal((parse('pods --kubeconfig /tmp/kc') as { kubeconfig: string }).kubeconfig, '/tmp/kc');
    });
    it('pods takes -n or -A, not both', () => {
      assert.deepEqual(parse('pods'), { command: 'pods', output: 'text', allNamespaces: false });
      assert.deepEqual(parse('pods -n shop'), { command: 'pods', output: 'text', allNamespaces: false, namespace: 'shop' });
      assert.deepEqual(parse('pods -A -o wide'), { command: 'pods', output: 'wide', allNamespaces: true });
      assert.match(errorOf('pods -A -n shop'), /-n\/--namespace and -A\/--all-namespaces: choose one/);
      assert.match(errorOf('pods web-0'), /podlife pods lists pods and takes no name/);
      assert.match(errorOf('pods -w'), /--watch: only for podlife explain <pod>/);
    });
    it('explain refuses -A, pointing at pods -A', () => assert.match(errorOf('explain web-0 -A'), /explain takes one pod.*podlife pods -A/));
    it('completion takes bash or zsh', () => {
      assert.deepEqual(parse('completion bash'), { command: 'completion', shell: 'bash' });
      assert.deepEqual(parse('completion zsh'), { command: 'completion', shell: 'zsh' });
      assert.match(errorOf('completion'), /completion needs a shell: bash or zsh/);
      assert.match(errorOf('completion fish'), /completion "fish": use bash or zsh/);
    });
  });

  describe('bad command lines', () => {
    it('an unknown command names it and the known ones', () => assert.match(errorOf('describe web-0'), /unknown command "describe": use explain, nodes, pods, migrate or completion/));
    it('an --output other than text, wide, json or yaml', () => {
      assert.match(errorOf('explain web-0 -o name'), /--output "name": use text, wide, json, yaml/);
      assert.match(errorOf('explain node worker-1 --output jsonpath'), /--output "jsonpath"/);
      assert.match(errorOf('nodes -o table'), /--output "table"/);
    });
    it('an unknown flag names it', () => assert.match(errorOf('nodes --selector pool=a'), /--selector/));
    it('a flag missing its value', () => assert.match(errorOf('explain web-0 --context'), /--context/));
  });
});
