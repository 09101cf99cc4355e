import net from 'node:net';

const PRODUCE = 0;
const METADATA = 3;

/** A Kafka wire frame: its 4-byte size, then the rest. */
function takeFrames(buffer: Buffer): { frames: Buffer[]; rest: Buffer } {
  const frames: Buffer[] = [];
  let at = 0;
  while (buffer.length - at >= 4) {
    const size = buffer.readInt32BE(at);
    if (buffer.length - at < 4 + size) break;
    frames.push(buffer.subarray(at, at + 4 + size));
    at += 4 + size;
  }
  return { frames, rest: buffer.subarray(at) };
}

export interface KafkaProxy {
  /** The proxy's addresses, one per broker, to bootstrap from: metadata answers name them, not the brokers. */
  readonly brokers: string[];
  /**
   * The next Produce answer is dropped and its connection closed (the broker wrote the batch, or
   * refused it: the client cannot tell). Resolves once that happened; from then every Produce request
   * waits in the proxy until releaseProduce().
   */
  dropNextProduceAnswer(): Promise<void>;
  releaseProduce(): void;
  close(): Promise<void>;
}

/**
 * A TCP proxy in front of each broker of a cluster, forwarding every byte unchanged except: metadata
 * answers name the proxy's ports instead of the brokers' (so the client's every connection goes through
 * it), and one Produce answer can be dropped. The broker itself does everything else.
 */
export async function startKafkaProxy(brokers: readonly string[]): Promise<KafkaProxy> {
  const targets = brokers.map((b) => {
    const [host, port] = b.split(':');
    return { host: host!, port: Number(port) };
  });
  const servers: net.Server[] = [];
  const sockets = new Set<net.Socket>();
  const ports: number[] = [];
  let drop: (() => void) | undefined;
  let gate: Promise<void> | undefined;
  let open: (() => void) | undefined;

  // Each broker's own entry in a metadata answer: its host, then its port (int32) right after.
  const rewrite = (frame: Buffer): Buffer => {
    const out = Buffer.from(frame);
    targets.forEach((t, i) => {
      const pattern = Buffer.concat([Buffer.from(t.host), Buffer.alloc(4)]);
      pattern.writeInt32BE(t.port, t.host.length);
      for (let at = out.indexOf(pattern); at >= 0; at = out.indexOf(pattern, at + 1))
        out.writeInt32BE(ports[i]!, at + t.host.length);
    });
    return out;
  };

  for (const target of targets) {
    const server = net.createServer((client) => {
      const upstream = net.connect(target.port, target.host);
      sockets.add(client).add(upstream);
      const apiOf = new Map<number, number>();
      let fromClient: Buffer = Buffer.alloc(0);
      let fromBroker: Buffer = Buffer.alloc(0);
      let writing = Promise.resolve();
      const end = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('error', end).on('close', end);
      upstream.on('error', end).on('close', end);
      client.on('data', (chunk) => {
        const { frames, rest } = takeFrames(Buffer.concat([fromClient, chunk]));
        fromClient = rest;
        for (const frame of frames) {
          const api = frame.readInt16BE(4);
          apiOf.set(frame.readInt32BE(8), api);
          // In order on this connection: a held Produce holds what the client sent after it.
          writing = writing.then(async () => {
            if (api === PRODUCE && gate) await gate;
            upstream.write(frame);
          });
        }
      });
      upstream.on('data', (chunk) => {
        const { frames, rest } = takeFrames(Buffer.concat([fromBroker, chunk]));
        fromBroker = rest;
        for (const frame of frames) {
          const correlation = frame.readInt32BE(4);
          const api = apiOf.get(correlation);
          apiOf.delete(correlation);
          if (api === PRODUCE && drop) {
            const dropped = drop;
            drop = undefined;
            gate = new Promise((resolve) => (open = resolve));
            end();
            dropped();
            return;
          }
          client.write(api === METADATA ? rewrite(frame) : frame);
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
    ports.push((server.address() as net.AddressInfo).port);
  }

  return {
    brokers: ports.map((p) => `127.0.0.1:${p}`),
    dropNextProduceAnswer: () => new Promise<void>((resolve) => (drop = resolve)),
    releaseProduce() {
      gate = undefined;
      open?.();
    },
    async close() {
      for (const s of sockets) s.destroy();
      await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
    },
  };
}
