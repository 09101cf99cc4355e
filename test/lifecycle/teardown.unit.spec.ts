import { describe, expect, it } from 'vitest';
import { Teardown } from '../../src/lifecycle/teardown.ts';

describe('Teardown', () => {
  it('closes in reverse order of opening, once, however often it is run', async () => {
    const closed: string[] = [];
    const t = new Teardown();
    t.add(() => closed.push('pool'));
    t.add(async () => {
      await new Promise((r) => setTimeout(r, 5));
      closed.push('appender');
    });
    t.add(() => closed.push('server'));
    await Promise.all([t.run(), t.run()]);
    await t.run();
    expect(closed).toEqual(['server', 'appender', 'pool']);
  });
});
