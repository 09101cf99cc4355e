import type { tracing } from '@opentelemetry/sdk-node';

export interface Tracing {
  shutdown(): Promise<void>;
}

/** The SDK is imported only when tracing is on: it is large, and every CLI command would pay for it. */
export async function startTracing(options: {
  serviceName: string;
  env?: NodeJS.ProcessEnv;
  /** Tests: where spans go instead of OTLP. */
  spanProcessors?: tracing.SpanProcessor[];
}): Promise<Tracing | undefined> {
  const env = options.env ?? process.env;
  if (!options.spanProcessors && !env.OTEL_EXPORTER_OTLP_ENDPOINT && !env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
    return undefined;
  const { NodeSDK } = await import('@opentelemetry/sdk-node');
  const sdk = new NodeSDK({
    serviceName: env.OTEL_SERVICE_NAME ?? options.serviceName,
    ...(options.spanProcessors ? { spanProcessors: options.spanProcessors, autoDetectResources: false } : {}),
  });
  sdk.start();
  return { shutdown: () => sdk.shutdown() };
}
