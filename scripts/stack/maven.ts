import { spawnSync } from 'node:child_process';

/** Runs Maven in batch mode; artifacts land in the local repository (~/.m2), which is the download cache. */
export function mvn(args: string[], what: string): void {
  const result = spawnSync('mvn', ['-B', '-q', ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (result.error) {
    throw new Error(
      `${what}: cannot run Maven (${result.error.message}); install Java 17 and Maven, or use Docker`,
    );
  }
  if (result.status !== 0) {
    const out = `${result.stdout}\n${result.stderr}`.trim().split('\n').slice(-20).join('\n');
    throw new Error(`${what}: Maven failed (exit ${result.status}):\n${out}`);
  }
}
