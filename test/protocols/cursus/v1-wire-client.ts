// A raw Cursus v1 client for tests: u32-length frames over TCP, written and read as bytes, the
// way the Go, Java and Python SDKs put them on the wire (no Quartet code on the client side but
// the v1 framer that cuts the replies). Every wait is bounded by waitMsMax.

import { connect, type Socket } from 'node:net';
import { V1Framer } from '../../../src/protocols/cursus/v1/framing.js';

export const waitMsMax = 5_000;

/** A v1 frame around a body. */
export function v1Frame(body: Buffer | string): Buffer {
  const b = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const len = Buffer.alloc(4);
  len.writeUInt32BE(b.length, 0);
  return Buffer.concat([len, b]);
}

/** The Go SDK's legacy envelope (EncodeMessage(topic, command)). */
export function v1Envelope(command: string, topic = ''): Buffer {
  const t = Buffer.from(topic, 'utf8');
  const len = Buffer.alloc(2);
  len.writeUInt16BE(t.length, 0);
  return Buffer.concat([len, t, Buffer.from(command, 'utf8')]);
}

export class V1WireClient {
  private readonly framer = new V1Framer();
  private readonly bodies: Buffer[] = [];
  private waiter: (() => void) | null = null;
  /** Every byte received (for the switch-off test). */
  received = 0;
  ended = false;
  readonly closed: Promise<void>;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.received += chunk.length;
      for (const r of this.framer.push(chunk)) if (r.ok) this.bodies.push(Buffer.from(r.body));
      this.wake();
    });
    socket.on('error', () => {});
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
    socket.once('end', () => {
      this.ended = true;
      this.wake();
    });
  }

  static connect(port: number): Promise<V1WireClient> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port }, () => resolve(new V1WireClient(socket)));
      socket.once('error', reject);
    });
  }

  send(body: Buffer | string): void {
    this.socket.write(v1Frame(body));
  }

  writeRaw(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  /** The next frame body the broker writes. */
  async next(): Promise<Buffer> {
    const deadline = Date.now() + waitMsMax;
    while (this.bodies.length === 0) {
      if (this.ended) throw new Error('the broker closed the connection');
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('no reply within the deadline');
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiter = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.waiter = null;
    }
    return this.bodies.shift()!;
  }

  /** Sends a command and returns the one frame it is answered with, as text. */
  async line(command: string | Buffer): Promise<string> {
    this.send(command);
    return (await this.next()).toString('utf8');
  }

  /** Resolves once the broker ended the connection (or rejects after the deadline). */
  async whenEnded(): Promise<void> {
    const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the connection stayed open')), waitMsMax).unref());
    await Promise.race([this.closed, timeout]);
  }

  end(): void {
    this.socket.end();
  }

  destroy(): void {
    this.socket.destroy();
  }

  private wake(): void {
    this.waiter?.();
  }
}
