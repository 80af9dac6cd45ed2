// One incarnation of the broker under simulation: a Broker on the simulated disk (SimDisk) with
// the Kafka and Iggy front-ends over it, all in process (no sockets), on the shared manual clock
// (each incarnation with its own scheduler). Requests go through each protocol's own codecs both ways, as the handler tests'
// harnesses send them (Kafka: call-handler.ts; Iggy: encodeRequestFrame / decodeRequest /
// handler / encodeReply / decodeReply). A restart is close() then a new SimNode on the same
// directory; a crash abandons the incarnation with its disk dead (no flush, no snapshot, no
// close) and leaves it to be released at the end of the run.

import { Broker } from '../../src/core/broker.js';
import type { ManualClock } from '../../src/base/clock.js';
import { silentLogger } from '../../src/base/logger.js';
import { isQuartetError } from '../../src/base/errors.js';
import { ManualScheduler } from '../../src/core/scheduler.js';
import type { User } from '../../src/core/users.js';
import { KafkaBrokerFrontend } from '../../src/protocols/kafka/frontend.js';
import type { KafkaHandler, KafkaSession } from '../../src/protocols/kafka/handlers/types.js';
import type { RequestInputOf, ResponseOf, SchemaApiKey } from '../../src/protocols/kafka/codec/messages/index.js';
import { kafkaBrokerTransactionOptions } from '../../src/protocols/kafka/transactions.js';
import { IggyFrontend, type IggySession } from '../../src/protocols/iggy/frontend.js';
import { CommandCode, decodeReply, decodeRequest, decodeRequestHeader, encodeReply, encodeRequestFrame, headerBytes, type ReplyOf, type RequestOf } from '../../src/protocols/iggy/codec/index.js';
import { IggyFailure, iggyCodeOf } from '../../src/protocols/iggy/errors.js';
import type { IggyHandler } from '../../src/protocols/iggy/handlers/types.js';
import { builtinFormats } from '../../src/server/listeners.js';
import { askHandler } from '../protocols/kafka/handlers/call-handler.js';
import type { SimDisk } from './faulty-disk.js';

/** An Iggy answer: the reply, or the error code the connection would send. */
export type IggyAnswer<C extends CommandCode> = { ok: true; value: ReplyOf<C> } | { ok: false; code: number };

export class SimNode {
  private correlationId = 0;
  private iggyRequest = 0n;
  private readonly kafkaSession: KafkaSession;
  private readonly iggySession: IggySession;

  private constructor(
    readonly broker: Broker,
    readonly kafka: KafkaBrokerFrontend,
    readonly iggy: IggyFrontend,
    readonly disk: SimDisk,
    /** This incarnation's timers: a crashed one's never fire again (they could write to the store). */
    readonly scheduler: ManualScheduler,
    private readonly root: User,
  ) {
    this.kafkaSession = { remote: '127.0.0.1:50123', clientId: 'sim', principal: null, sasl: null, logger: silentLogger };
    this.iggySession = { connectionId: 1, address: '127.0.0.1:50124', clientId: 1n, session: 1n, userId: root.id, lastActivityMs: 0, evict: () => undefined };
  }

  static async open(dataDir: string, disk: SimDisk, clock: ManualClock): Promise<SimNode> {
    const scheduler = new ManualScheduler(clock);
    const broker = await Broker.open({
      formats: builtinFormats(),
      dataDir,
      clock,
      scheduler,
      logFs: disk,
      // Synchronous writes decide by elapsed real time when to yield: not reproducible from a seed.
      directWrites: null,
      maintenanceIntervalMs: 0,
      rootUser: { username: 'root', password: 'sim' },
      scryptCost: { N: 1024, r: 8, p: 1 },
      transactions: kafkaBrokerTransactionOptions,
    });
    const kafka = new KafkaBrokerFrontend({
      broker,
      logger: silentLogger,
      clock,
      scheduler,
      clusterId: 'sim-cluster',
      persistGroups: true,
      advertisedAddr: { host: '127.0.0.1', port: 19092 },
      groupConfig: { initialRebalanceDelayMs: 0 },
    });
    await kafka.start();
    const iggy = new IggyFrontend({ broker, logger: silentLogger, clock, scheduler });
    await iggy.start();
    const root = broker.users.get(0);
    if (root === undefined || root === null) throw new Error('no root user');
    return new SimNode(broker, kafka, iggy, disk, scheduler, root);
  }

  /** A Kafka request through both codecs at `version`. */
  kafkaCall<K extends SchemaApiKey>(handler: KafkaHandler<K>, version: number, input: RequestInputOf<K>): Promise<ResponseOf<K>> {
    return askHandler(handler, version, input, { frontend: this.kafka, session: this.kafkaSession, correlationId: ++this.correlationId });
  }

  /** An Iggy command through both codecs, as the logged-in root user. */
  async iggyCall<C extends CommandCode>(code: C, request: RequestOf<C>): Promise<IggyAnswer<C>> {
    const frame = Buffer.concat(encodeRequestFrame(code, request, { client: 1n, request: ++this.iggyRequest, session: 1n }));
    const header = decodeRequestHeader(frame.subarray(0, headerBytes));
    const decoded = decodeRequest(code, frame.subarray(headerBytes));
    if (!decoded.ok) throw new Error(`iggy request ${code} does not decode: ${decoded.reason}`);
    const handler = this.iggy.handlers[code] as IggyHandler<C> | undefined;
    if (handler === undefined) throw new Error(`no iggy handler for ${code}`);
    let reply: ReplyOf<C>;
    try {
      reply = await handler({ frontend: this.iggy, session: this.iggySession, user: this.root, header }, decoded.value.request as RequestOf<C>);
    } catch (error) {
      if (!(error instanceof IggyFailure) && !isQuartetError(error)) throw error;
      return { ok: false, code: iggyCodeOf(error) };
    }
    const back = decodeReply(code, Buffer.concat(encodeReply(code, reply)));
    if (!back.ok) throw new Error(`iggy reply ${code} does not decode: ${back.reason}`);
    if (back.value.rejected) return { ok: false, code: back.value.code };
    return { ok: true, value: back.value.value };
  }

  /** A clean stop: front-ends, then the broker (flush, snapshots, close). */
  async close(): Promise<void> {
    this.iggy.close();
    await this.kafka.close();
    await this.broker.close();
  }

  /**
   * A crash: the disk is dead from now on, and the incarnation is dropped as it is. release()
   * frees its descriptors and metadata connection once the run is over (its close can write
   * nothing to the logs; what it writes to the metadata store no later check reads).
   */
  crash(): void {
    this.disk.crash();
    this.iggy.close();
  }

  async release(): Promise<void> {
    await this.kafka.close().catch(() => undefined);
    await this.broker.close().catch(() => undefined);
  }
}

export { CommandCode };
