/**
 * The `podlife` CLI run as a user runs it, from this checkout's source, as a process of its own
 * against a kubeconfig: its exit code and both streams, whatever the code (a failing command is
 * an answer to assert on, not an error).
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const cliPath = fileURLToPath(new URL('../../packages/controller/src/cli/podlife.ts', import.meta.url));

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function podlife(kubeconfig: string, args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', '--conditions=@podlife/source', cliPath, ...args], { env: { ...process.env, KUBECONFIG: kubeconfig } }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}
