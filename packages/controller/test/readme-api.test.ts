import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

/** The generated API section of a package README (scripts/api-docs.mjs; `pnpm lint` checks it is current). */
function apiSection(pkg: string): string {
  const readme = readFileSync(new URL(`../../${pkg}/README.md`, import.meta.url), 'utf8');
  return readme.slice(readme.indexOf('<!-- api:start'), readme.indexOf('<!-- api:end -->'));
}

describe('the API reference in each package README', () => {
  it('shows how to get a class with a private constructor: its static factories, never `new`', () => {
    const core = apiSection('core');
    for (const factory of ['static start(opts?: FakeApiServerOptions): Promise<FakeApiServer>', 'static fromDefault(context?: string): Promise<KubeClient>', 'static fromKubeConfig(', 'static fromConnection(']) {
      assert.ok(core.includes(factory), factory);
    }
    assert.doesNotMatch(core, /new (KubeClient|FakeApiServer)\b|private constructor/);
  });

  it('lists the fields of options objects and interfaces, with their doc comments', () => {
    const keystone = apiSection('keystone');
    assert.match(keystone, /interface AdmissionOptions \{\n {2}\/\*\* Compute the patch for a pod\. \*\/\n {2}mutate\(pod: V1Pod, request: AdmissionRequest\)[^\n]*;\n {2}\/\*\* Default `Ignore`\. \*\/\n {2}failurePolicy\?: MutatorFailurePolicy;\n\}/);
    assert.match(keystone, /interface KeystoneConfig extends LifecycleOptions \{/);
    assert.match(apiSection('core'), /interface ManagerOptions \{[^}]*\n {2}client: KubeClient;/);
    assert.match(apiSection('pod-conditions'), /interface Diagnosis \{[^}]*\n {2}subject\?: string;/);
  });

  it('the controller README carries the CLI usage, with every command', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    for (const line of ['podlife pods [-n namespace | -A]', 'podlife completion bash|zsh', 'podlife explain --unlabelled', 'Usage: podlife-controller']) assert.ok(readme.includes(line), line);
  });
});
