import { freePort } from '../demo/port.ts';

/** A worker process with a metrics listener, as `up` runs it. */
export interface ListeningWorker {
  readonly name: string;
  readonly args: string[];
  readonly port: number;
  readonly url: string;
}

/** One instance of a worker: instance `replica` (0-based) of `replicas`. */
export interface WorkerInstance extends ListeningWorker {
  readonly replica: number;
}

/** The name of instance `r` (0-based): `poller` alone, `poller-1`, `poller-2`… with replicas. */
export const replicaName = (name: string, r: number, replicas: number) =>
  replicas > 1 ? `${name}-${r + 1}` : name;

/**
 * `replicas` instances of each worker, each with a metrics port of its own. With METRICS_PORT the i-th
 * worker's port METRICS_PORT + i becomes METRICS_PORT + i * N + r for its instance r (with one instance
 * nothing moves, so scrape targets stay put); without, instance 0 keeps its free port and the others get
 * free ports too.
 */
export async function replicaInstances(
  workers: readonly ListeningWorker[],
  replicas: number,
  metrics: { readonly port: number; readonly host: string },
): Promise<WorkerInstance[]> {
  if (replicas === 1) return workers.map((w) => ({ ...w, replica: 0 }));
  const out: WorkerInstance[] = [];
  for (const w of workers)
    for (let r = 0; r < replicas; r++) {
      const port = metrics.port
        ? metrics.port + (w.port - metrics.port) * replicas + r
        : r === 0
          ? w.port
          : await freePort(metrics.host);
      const name = replicaName(w.name, r, replicas);
      if (port > 65_535)
        throw new Error(`METRICS_PORT ${metrics.port}: ${name}'s port ${port} is past 65535`);
      const url = new URL(w.url);
      url.port = String(port);
      out.push({ name, args: w.args, port, url: url.origin, replica: r });
    }
  return out;
}

/**
 * The listening ports of a webhook's or a gateway's instances: consecutive from `first` when the port is
 * configured (Node 20 cannot share one port between processes: a load balancer in front spreads the
 * requests over them), free ports when it is not (0).
 */
export async function replicaPorts(
  first: number,
  configured: boolean,
  replicas: number,
  what: string,
): Promise<number[]> {
  const ports = [first];
  for (let r = 1; r < replicas; r++) ports.push(configured ? first + r : await freePort());
  if (ports.some((p) => p > 65_535)) throw new Error(`${what} ${first} + ${replicas - 1} is past 65535`);
  return ports;
}
