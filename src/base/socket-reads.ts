// Where a plain TCP socket's reads land, for the broker's listener and the SDK alike (Node's
// `onread` option with a buffer function: Node calls it once when reading starts and then right
// after each delivered read, to choose the buffer the next read fills).
//
// By default every read goes into one shared 64 KiB buffer: libuv delivers one read at a time on
// the event loop and each callback hands the chunk to a framer that copies what it keeps, so no
// read allocates. While a framer assembles a large frame, it may offer the unfilled rest of that
// frame instead (`DirectReads.target`): the next read then lands in the frame itself and nothing is
// copied. The callback tells the two apart by identity, since Node passes back the very buffer
// the function returned.
//
// A target must never be empty: libuv answers a zero-length read buffer with ENOBUFS.
//
// A target stays in the socket's handle until the next read, through a pause or an idle spell. So
// the frame it belongs to must stay alive until the socket can no longer read: the framers drop a
// frame being assembled only on 'close' (the handle is closed by then) or after a framing error
// (when no frame is being assembled), and a stale target's bytes are ignored (pushDirect checks
// that the target is still the rest of the frame in progress).

/** A framer's offer of reads in place (see IggyFramer.directTarget and pushDirect). */
export interface DirectReads {
  /** The buffer the next read may fill in place, or null to read into the shared buffer. */
  target(): Buffer | null;
  /** `bytes` were read into `target`, the buffer the last target() call returned. */
  filled(target: Buffer, bytes: number): void;
}

/**
 * Frames with at least this much still to come are offered for reads in place (smaller rests ride
 * a chunk of the shared buffer: an extra read call would cost more than the copy).
 */
export const directReadBytesMin = 64 * 1024;

/** The shared read buffer: 64 KiB, Node's own per-read allocation size. */
export const sharedReadBuffer = Buffer.allocUnsafeSlow(64 * 1024);

export class SocketReads {
  private onChunk: ((chunk: Buffer) => void) | null = null;
  private direct: DirectReads | null = null;
  /** Where the read in progress lands, when it is a frame's own buffer. */
  private target: Buffer | null = null;
  /** Chunks read before a handler was attached (copied), replayed by attach. */
  private early: Buffer[] = [];

  /** The `onread` option for net.connect or new Socket. */
  readonly onread = {
    buffer: (): Uint8Array => {
      // Called from inside Node's read callback, where a throw would be uncaught: any trouble
      // choosing a target means the shared buffer.
      let target: Buffer | null = null;
      try {
        target = this.direct?.target() ?? null;
      } catch {
        target = null;
      }
      this.target = target !== null && target.length > 0 ? target : null;
      return this.target ?? sharedReadBuffer;
    },
    /** true: keep reading (the socket's pause() still stops it). */
    callback: (bytes: number, buf: Uint8Array): boolean => {
      const target = this.target;
      this.target = null;
      if (target !== null && buf === target) {
        this.direct!.filled(target, bytes);
        return true;
      }
      const chunk = Buffer.from(buf.buffer, buf.byteOffset, bytes);
      if (this.onChunk !== null) this.onChunk(chunk);
      else this.early.push(Buffer.from(chunk));
      return true;
    },
  };

  /**
   * Hands chunks (valid only during the call: copy what you keep) to `onChunk`, and reads in place
   * wherever `direct` offers a target.
   */
  attach(onChunk: (chunk: Buffer) => void, direct?: DirectReads): void {
    this.onChunk = onChunk;
    this.direct = direct ?? null;
    for (const chunk of this.early.splice(0)) onChunk(chunk);
  }
}
