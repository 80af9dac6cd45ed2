// Sequential envelope scanning over a segment file, in chunks: what recovery, verification,
// dumps, compaction and timestamp lookups walk. Yields envelopes whose bytes sit in a chunk
// buffer (views, no copies) and stops at the first problem, reporting where it is.

import { checkEnvelope, decodeEnvelopeHeader, envelopeBytes, envelopeHeaderBytes, type EnvelopeHeader, type EnvelopeProblem } from './envelope.js';
import type { LogFileSystem } from './fs.js';

/** Bytes read per chunk when scanning; an envelope larger than this gets a chunk of its own. */
export const scanChunkBytes = 1024 * 1024;

export interface ScannedEnvelope {
  header: EnvelopeHeader;
  /** File position of the envelope. */
  position: number;
  /** The chunk holding the whole envelope, and where the envelope starts in it. */
  buffer: Buffer;
  at: number;
}

export interface ScanStop {
  problem: EnvelopeProblem | 'offset not increasing' | 'short read';
  position: number;
}

export interface ScanOptions {
  /** Check each envelope's CRC32C (recovery, verify); header structure is always checked. */
  verifyChecksum: boolean;
  /** Offsets must not go below this (the previous batch's end, or the segment base). */
  minOffset?: number;
}

/**
 * Scans envelopes in [start, end) of `fd`. Returns normally at `end`; calls `onStop` with the
 * first problem (torn or corrupt envelope) and ends there.
 */
export async function* scanEnvelopes(
  fsys: LogFileSystem,
  fd: number,
  start: number,
  end: number,
  options: ScanOptions,
  onStop: (stop: ScanStop) => void,
): AsyncGenerator<ScannedEnvelope> {
  let buffer = Buffer.alloc(0);
  let bufferStart = start;
  let position = start;
  let minOffset = options.minOffset ?? 0;
  const refill = async (bytes: number): Promise<boolean> => {
    const length = Math.min(Math.max(bytes, scanChunkBytes), end - position);
    buffer = Buffer.allocUnsafe(length);
    const n = await readFully(fsys, fd, buffer, position);
    buffer = buffer.subarray(0, n);
    bufferStart = position;
    return n >= Math.min(bytes, end - position);
  };
  while (position < end) {
    if (bufferStart + buffer.length - position < envelopeHeaderBytes && !(await refill(envelopeHeaderBytes))) {
      return onStop({ problem: 'short read', position });
    }
    if (end - position < envelopeHeaderBytes) return onStop({ problem: 'truncated', position });
    const header = decodeEnvelopeHeader(buffer, position - bufferStart);
    if (typeof header === 'string') return onStop({ problem: header, position });
    const bytes = envelopeBytes(header);
    if (position + bytes > end) return onStop({ problem: 'truncated', position });
    if (bufferStart + buffer.length - position < bytes && !(await refill(bytes))) return onStop({ problem: 'short read', position });
    const at = position - bufferStart;
    if (options.verifyChecksum) {
      const checked = checkEnvelope(buffer, at);
      if (typeof checked === 'string') return onStop({ problem: checked, position });
    }
    if (header.baseOffset < minOffset) return onStop({ problem: 'offset not increasing', position });
    minOffset = header.baseOffset + header.recordCount;
    yield { header, position, buffer, at };
    position += bytes;
  }
}

/** pread until `buffer` is full or the file ends. */
export async function readFully(fsys: LogFileSystem, fd: number, buffer: Buffer, position: number): Promise<number> {
  let done = 0;
  while (done < buffer.length) {
    const n = await fsys.read(fd, buffer, done, buffer.length - done, position + done);
    if (n === 0) break;
    done += n;
  }
  return done;
}
