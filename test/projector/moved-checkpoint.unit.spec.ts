import { describe, expect, it } from 'vitest';
import { movedCheckpointMessage } from '../../src/projector/projector.ts';

/**
 * A batch whose checkpoint compare-and-set is refused: the log line must not say "not applied" of a batch
 * whose events the stored checkpoint already covers (a group fold that failed after its COMMIT went
 * through is tried again run by run, and each run then finds its own checkpoint moved).
 */
describe('movedCheckpointMessage', () => {
  it('says a batch the stored checkpoint covers is folded, at its end or past it', () => {
    expect(movedCheckpointMessage(120n, 120n)).toMatch(/already past this batch/);
    expect(movedCheckpointMessage(500n, 120n)).toMatch(/already past this batch/);
    expect(movedCheckpointMessage(120n, 120n)).not.toMatch(/not applied/);
  });

  it('says a batch the stored checkpoint stops short of is not applied, and fetched again', () => {
    expect(movedCheckpointMessage(119n, 120n)).toMatch(/not applied, fetching again/);
    expect(movedCheckpointMessage(0n, 120n)).toMatch(/not applied/);
  });
});
