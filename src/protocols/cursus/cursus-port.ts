// The connections of the Cursus port. Without cursus.v1Compat every connection is a Wire v2
// CursusConnection, and v1 bytes are refused by its framer (the connection closes). With it, a
// connection waits for its first bytes (at most 4) and becomes a V1Connection when they are v1's
// (isV1Start: a u32 body length of at most 16 MiB, where Wire v2 opens with `CRS2`), else a
// CursusConnection; the bytes read so far, and every later chunk, go to the one chosen.
//
// Before the choice nothing is in flight: the listener's idle timeout and authentication deadline
// apply as to any connection, and a FIN or a close ends the socket.

import type { Socket } from 'node:net';
import type { CloseReason, ConnectionContext, ConnectionFactory, ConnectionHandle } from '../transport.js';
import { CursusConnection } from './connection.js';
import { overrideContext } from './connection-context.js';
import type { CursusFrontend } from './frontend.js';
import { V1Connection } from './v1-connection.js';
import { isV1Start, v1LengthBytes } from './v1/framing.js';

/** The connection factory of the Cursus listener. */
export function cursusConnectionFactory(frontend: CursusFrontend): ConnectionFactory {
  return (socket, context) => (frontend.settings.v1Compat ? new CursusPortConnection(frontend, socket, context) : new CursusConnection(frontend, socket, context));
}

/** A connection until its first bytes tell v1 from Wire v2; then the chosen connection's handle. */
export class CursusPortConnection implements ConnectionHandle {
  private head: Buffer = Buffer.alloc(0);
  private chosen: ConnectionHandle | null = null;
  /** The chosen connection's chunk handler (it reads through `inner.readInto`). */
  private forward: ((chunk: Buffer) => void) | null = null;
  private closing = false;

  constructor(
    private readonly frontend: CursusFrontend,
    private readonly socket: Socket,
    private readonly context: ConnectionContext,
  ) {
    if (context.readInto) context.readInto((chunk) => this.onData(chunk));
    else socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.once('end', () => {
      if (this.chosen === null) socket.end();
    });
  }

  /** v1 or Wire v2, once the first bytes came (null before). */
  get protocol(): 'v1' | 'v2' | null {
    if (this.chosen === null) return null;
    return this.chosen instanceof V1Connection ? 'v1' : 'v2';
  }

  close(reason: CloseReason): void {
    if (this.chosen !== null) return this.chosen.close(reason);
    this.closing = true;
  }

  whenIdle(): Promise<void> {
    return this.chosen?.whenIdle?.() ?? Promise.resolve();
  }

  private onData(chunk: Buffer): void {
    if (this.forward !== null) return this.forward(chunk);
    if (this.closing) return;
    const seen = this.head.length === 0 ? chunk : Buffer.concat([this.head, chunk.subarray(0, v1LengthBytes)]);
    const v1 = isV1Start(seen);
    if (v1 === null) {
      // Fewer than 4 bytes, the first allowing v1: kept (copied: the chunk's memory is reused).
      this.head = Buffer.from(seen);
      return;
    }
    this.choose(v1);
    const head = this.head;
    this.head = Buffer.alloc(0);
    if (head.length > 0) this.forward!(head);
    this.forward!(chunk);
  }

  private choose(v1: boolean): void {
    const inner = this.innerContext();
    this.chosen = v1 ? new V1Connection(this.frontend, this.socket, inner) : new CursusConnection(this.frontend, this.socket, inner);
    if (this.forward === null) throw new Error('a Cursus connection did not take its input');
  }

  /** The listener's context, with the chunks coming from this connection. */
  private innerContext(): ConnectionContext {
    // Chunks are handed on as they come: views of the shared read buffer, or 'data' chunks.
    return overrideContext(this.context, {
      readInto: (onChunk) => {
        this.forward = onChunk;
      },
    });
  }
}
