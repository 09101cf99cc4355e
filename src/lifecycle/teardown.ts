/**
 * What a long-running process opened, closed in reverse order. Running it twice closes nothing twice:
 * the second call waits for the first.
 */
export class Teardown {
  private readonly steps: (() => unknown)[] = [];
  private done: Promise<void> | undefined;

  add(step: () => unknown): void {
    this.steps.push(step);
  }

  run(): Promise<void> {
    this.done ??= (async () => {
      for (const step of [...this.steps].reverse()) await step();
    })();
    return this.done;
  }
}
