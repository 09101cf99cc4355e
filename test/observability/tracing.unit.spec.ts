import { describe, expect, it } from 'vitest';
import { headersForKept, keepTraceContext } from '../../src/observability/tracing.ts';

const KEPT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const APPEND_SAME_TRACE = '00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01';
const APPEND_OTHER_TRACE = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('trace context kept with an outbox row', () => {
  it('keeps nothing when tracing is off (no SDK started)', () => {
    expect(keepTraceContext()).toEqual({ traceParent: null, traceState: null });
  });

  it("sends the kept context when the append runs in another trace (the relay's)", () => {
    expect(
      headersForKept({ traceParent: KEPT, traceState: 'vendor=x' }, { traceparent: APPEND_OTHER_TRACE }),
    ).toEqual({ traceparent: KEPT, tracestate: 'vendor=x' });
    expect(headersForKept({ traceParent: KEPT, traceState: null }, {})).toEqual({ traceparent: KEPT });
  });

  it("sends the append's context when nothing was kept, or when the append is in the same trace", () => {
    const current = { traceparent: APPEND_SAME_TRACE };
    expect(headersForKept(undefined, current)).toBe(current);
    expect(headersForKept({ traceParent: null, traceState: null }, current)).toBe(current);
    expect(headersForKept({ traceParent: KEPT, traceState: null }, current)).toBe(current);
    expect(headersForKept({ traceParent: 'not-a-traceparent', traceState: null }, {})).toEqual({});
  });
});
