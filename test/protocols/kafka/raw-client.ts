// A raw Kafka test client over one socket: request frames out (frame, send), responses in order
// (response, with a deadline). For tests that need what the client libraries hide: requests sent
// and left unread, frames written byte by byte, replies counted as they come.

import type { Socket } from 'node:net';
import { Framer } from '../../../src/protocols/kafka/codec/framer.js';
import { decodeResponse, encodeRequest } from '../../../src/protocols/kafka/codec/frames.js';
import type { RequestInputOf, ResponseOf, SchemaApiKey } from '../../../src/protocols/kafka/codec/messages/index.js';

export class RawKafkaClient {
  private readonly framer = new Framer({ frameBytesMax: 1 << 28 });
  private readonly frames: Buffer[] = [];
  private wake: (() => void) | null = null;
  private correlationId = 0;

  /** `waitMs`: how long response() waits for a frame. */
  constructor(
    readonly socket: Socket,
    private readonly clientId = 'raw-test',
    private readonly waitMs = 10_000,
  ) {
    socket.on('data', (chunk: Buffer) => {
      this.frames.push(...this.framer.push(chunk).frames);
      this.wake?.();
    });
    socket.on('error', () => undefined);
  }

  /** The bytes of one request (the next correlation id), not written. */
  frame<K extends SchemaApiKey>(apiKey: K, version: number, body: RequestInputOf<K>): Buffer {
    return Buffer.concat(encodeRequest(apiKey, version, ++this.correlationId, this.clientId, body));
  }

  /** Writes one request. */
  send<K extends SchemaApiKey>(apiKey: K, version: number, body: RequestInputOf<K>): void {
    this.socket.write(this.frame(apiKey, version, body));
  }

  /** The next response, decoded as `apiKey` at `version`; throws when none comes within waitMs. */
  async response<K extends SchemaApiKey>(apiKey: K, version: number): Promise<ResponseOf<K>> {
    const deadline = Date.now() + this.waitMs;
    while (this.frames.length === 0) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('no response in time');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
    }
    const r = decodeResponse(apiKey, version, this.frames.shift()!);
    if (!r.ok) throw new Error(r.reason);
    return r.body;
  }
}
