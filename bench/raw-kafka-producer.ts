// A minimal Kafka producer for the latency benchmark: one connection (TCP_NODELAY), Produce v9 of
// one uncompressed RecordBatch per request, requests pipelined (each is written as soon as it is
// asked for, whatever is in flight) and answered in order, as Kafka answers a connection's
// requests. It exists to measure the broker with as little client work as possible around it:
// a send is one batch build, one frame encode and one socket write; an answer is one frame
// decode. KafkaJS, by comparison, spends milliseconds of its own per send on a loaded machine.

import { connect, type Socket } from 'node:net';
import { ApiKey } from '../src/protocols/kafka/codec/api-keys.js';
import { Framer } from '../src/protocols/kafka/codec/framer.js';
import { decodeResponse, encodeRequest } from '../src/protocols/kafka/codec/frames.js';
import { buildRecordBatch } from '../src/protocols/kafka/codec/record-batch.js';

const produceVersion = 9;

interface Pending {
  resolve(): void;
  reject(error: Error): void;
}

export class RawKafkaProducer {
  private readonly framer = new Framer({ frameBytesMax: 1 << 20 });
  /** Requests written and not yet answered, oldest first. */
  private readonly pending: Pending[] = [];
  private correlationId = 0;
  private failure: Error | null = null;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (error) => this.fail(error));
    socket.on('close', () => this.fail(new Error('connection closed')));
  }

  /** Connects to `address` (host:port). */
  static open(address: string): Promise<RawKafkaProducer> {
    const at = address.lastIndexOf(':');
    return new Promise((resolve, reject) => {
      const socket = connect({ host: address.slice(0, at), port: Number(address.slice(at + 1)), noDelay: true }, () => {
        socket.off('error', reject);
        resolve(new RawKafkaProducer(socket));
      });
      socket.once('error', reject);
    });
  }

  /** Produces one record to partition 0 of `topic`; resolves on an answer without error. */
  send(topic: string, value: Buffer, acks: -1 | 1 = -1): Promise<void> {
    if (this.failure !== null) return Promise.reject(this.failure);
    const records = buildRecordBatch([{ timestamp: Date.now(), key: null, value }]);
    const frame = encodeRequest(ApiKey.Produce, produceVersion, ++this.correlationId, 'quartet-bench-raw', {
      transactionalId: null,
      acks,
      timeoutMs: 30_000,
      topicData: [{ name: topic, partitionData: [{ index: 0, records }] }],
    });
    return new Promise((resolve, reject) => {
      this.pending.push({ resolve, reject });
      this.socket.write(frame.length === 1 ? frame[0]! : Buffer.concat(frame));
    });
  }

  close(): void {
    this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    const result = this.framer.push(chunk);
    for (const frame of result.frames) {
      const waiter = this.pending.shift();
      if (waiter === undefined) return this.fail(new Error('an answer to no request'));
      const decoded = decodeResponse(ApiKey.Produce, produceVersion, frame);
      if (!decoded.ok) {
        waiter.reject(new Error(`undecodable Produce response: ${decoded.reason}`));
        continue;
      }
      const errorCode = decoded.body.responses?.[0]?.partitionResponses?.[0]?.errorCode ?? -1;
      if (errorCode === 0) waiter.resolve();
      else waiter.reject(new Error(`Produce answered error ${errorCode}`));
    }
    if (!result.ok) this.fail(new Error(`bad response frame: ${result.reason}`));
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const waiter of this.pending.splice(0)) waiter.reject(error);
  }
}
