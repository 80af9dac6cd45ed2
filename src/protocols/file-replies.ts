// Replies whose bulk is stored log batches, sent from the segment files with sendfile(2).
//
// A poll (Iggy) or fetch reply is mostly batches exactly as the log stores them. Read the usual
// way, each byte is copied twice in this process: pread from the page cache into a buffer, then
// from that buffer into the socket. A reply made of ReplyChunks instead carries those batches as
// FileSlices (ReadOptions.fileSlicesMin) and `writeReply` hands them to the kernel with sendfile
// (the native addon's SocketSender): page cache to socket, no copy through JavaScript.
//
// Ordering: the buffers before a slice go through socket.write, and the slice is sent only once
// their write callback has run (Node's queue is then empty: callbacks run in order); while the
// slice is being sent nothing else may be written to the socket, so the caller awaits writeReply
// before writing anything more (and defers anything it must write meanwhile, e.g. an eviction).
// The slice goes through a dup() of the socket's fd, so a socket Node closes meanwhile can never
// be confused with a later one that reuses its fd number.
//
// sendfile runs on the thread pool (a page not in the page cache is read from the disk there, as
// a pread was, never on the event loop). Only plain TCP sockets with an fd qualify, only with the
// addon on Linux, and by default only for peers on other hosts (`canSendFiles`, QUARTET_SENDFILE);
// otherwise the front-end reads batches into buffers as before.

import type { Socket } from 'node:net';
import { constants } from 'node:os';
import type { FileSlice } from '../base/batch.js';
import { openSocketSender, socketSendFileAvailable, type SocketSender } from '../base/native.js';

export type ReplyChunk = Buffer | FileSlice;

/** File slices sent by this process, and their bytes (tests; a running total). */
export const fileReplyStats = { slices: 0, bytes: 0 };

/** Stored batches at least this large are sent as file slices (ReadOptions.fileSlicesMin). */
export const fileSliceBytesMin = 64 * 1024;

export function isFileSlice(chunk: ReplyChunk): chunk is FileSlice {
  return !Buffer.isBuffer(chunk);
}

/** The fd of a plain TCP socket, or null (TLS, no handle yet, closed). */
function socketFd(socket: Socket): number | null {
  if ((socket as Socket & { encrypted?: boolean }).encrypted === true) return null;
  const fd = (socket as unknown as { _handle?: { fd?: unknown } | null })._handle?.fd;
  return typeof fd === 'number' && Number.isInteger(fd) && fd >= 0 ? fd : null;
}

/**
 * When replies use file slices (QUARTET_SENDFILE): 'auto' (the default) for peers on other hosts
 * only (not loopback, not this socket's own local address), '1' for every peer, '0' never. On
 * loopback sendfile measured no faster: it saves the broker a tenth to a sixth of its CPU per
 * polled or fetched MB, but the peer on the same machine then copies each byte from the page
 * cache instead of from a buffer the broker has just written, and spends that much more (kcat
 * read-back was 1-14% slower, docs/benchmarks.md). A remote peer copies from its own socket
 * buffers either way, so there the saving is the broker's alone.
 */
export type SendFileMode = 'auto' | 'always' | 'never';

export function sendFileMode(value = process.env['QUARTET_SENDFILE']): SendFileMode {
  if (value === '0') return 'never';
  if (value === '1') return 'always';
  return 'auto';
}

/** 127.0.0.0/8, ::1 and their IPv4-mapped forms. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return v4.startsWith('127.') || address === '::1';
}

/**
 * Whether replies on `socket` may carry file slices: the addon is loaded, the socket is plain
 * TCP, and the mode allows it for this peer.
 */
export function canSendFiles(socket: Socket, mode: SendFileMode = sendFileMode()): boolean {
  if (mode === 'never' || !socketSendFileAvailable || socketFd(socket) === null) return false;
  if (mode === 'always') return true;
  // A peer on this host through one of its own addresses counts as local too.
  return !isLoopbackAddress(socket.remoteAddress) && socket.remoteAddress !== socket.localAddress;
}

export class SocketClosedError extends Error {
  constructor(message = 'socket closed while a reply was being sent') {
    super(message);
    this.name = 'SocketClosedError';
  }
}

/**
 * Replies of more bytes than this in buffers are written a slice of this size at a time
 * (writeReply), the event loop turning between slices. One write of a 16 MiB reply held the event
 * loop for 35–130 ms on a busy two-core machine (on loopback the kernel copies what it accepts,
 * and runs the peer's receive path, inside the write call; through TLS it is also encrypted
 * there), and every other connection waited.
 */
export const replySliceBytes = 1024 * 1024;

/** The bytes of a reply's chunks, buffers and file slices alike. */
export function replyBytes(chunks: readonly ReplyChunk[]): number {
  let bytes = 0;
  for (const chunk of chunks) bytes += chunk.length;
  return bytes;
}

/**
 * Writes `chunks` to `socket` in order; resolves once every byte has been handed to the kernel.
 * Rejects when the socket fails or closes first (the caller then destroys it: a reply cut short
 * leaves the stream unusable). Without file slices it is socket.write of the buffers, at most
 * replySliceBytes at a time. `onSent` hears of the bytes each sendfile call put on the wire
 * (socket writes show in writableLength).
 */
export async function writeReply(socket: Socket, chunks: readonly ReplyChunk[], onSent?: (bytes: number) => void): Promise<void> {
  if (!chunks.some((c) => isFileSlice(c) && c.length > 0)) {
    await writeInSlices(socket, chunks as readonly Buffer[]);
    return;
  }
  // Opened before any byte is written: a failure here leaves no half reply on the wire.
  const fd = socket.destroyed ? null : socketFd(socket);
  if (fd === null) throw new SocketClosedError('the socket cannot take file slices (closed, or not plain TCP)');
  const sender = openSocketSender(fd);
  if (sender === null) throw new Error('file slices need the native addon, on Linux');
  try {
    let pending: Buffer[] = [];
    for (const chunk of chunks) {
      if (!isFileSlice(chunk)) {
        pending.push(chunk);
        continue;
      }
      if (chunk.length === 0) continue;
      // Everything before the slice reaches the kernel first (and with it anything queued earlier).
      await writeBuffers(socket, pending.length > 0 ? pending : [Buffer.alloc(0)]);
      pending = [];
      await sendSlice(socket, sender, chunk, onSent);
      fileReplyStats.slices++;
      fileReplyStats.bytes += chunk.length;
    }
    await writeBuffers(socket, pending);
  } finally {
    sender.close();
  }
}

/**
 * Writes `buffers` at most replySliceBytes at a time: each slice once the one before it has been
 * handed to the kernel, after a turn of the event loop (setImmediate: other sockets' reads and
 * writes go first).
 */
async function writeInSlices(socket: Socket, buffers: readonly Buffer[]): Promise<void> {
  let slice: Buffer[] = [];
  let bytes = 0;
  for (const buffer of buffers) {
    for (let at = 0; at < buffer.length; ) {
      const take = Math.min(buffer.length - at, replySliceBytes - bytes);
      slice.push(take === buffer.length ? buffer : buffer.subarray(at, at + take));
      at += take;
      bytes += take;
      if (bytes < replySliceBytes) continue;
      await writeBuffers(socket, slice);
      slice = [];
      bytes = 0;
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (socket.destroyed) throw new SocketClosedError();
    }
  }
  await writeBuffers(socket, slice);
}

/** Writes `buffers` in one corked write (one writev, not a syscall per buffer); resolves once they are handed to the kernel. */
function writeBuffers(socket: Socket, buffers: readonly Buffer[]): Promise<void> {
  if (buffers.length === 0) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const last = buffers.length - 1;
    socket.cork();
    for (let i = 0; i < last; i++) socket.write(buffers[i]!);
    socket.write(buffers[last]!, (error) => (error ? reject(error) : resolve()));
    socket.uncork();
  });
}

async function sendSlice(socket: Socket, sender: SocketSender, slice: FileSlice, onSent?: (bytes: number) => void): Promise<void> {
  let position = slice.position;
  let left = slice.length;
  for (;;) {
    // Node may have destroyed the socket (its fd closed) while the duplicate still holds it open:
    // nothing more goes out then, and closing the sender lets the connection go.
    if (socket.destroyed) throw new SocketClosedError();
    const sent = await sender.sendFile(slice.fd, position, left);
    if (sent < 0) throw sendFileError(-sent);
    position += sent;
    left -= sent;
    if (sent > 0) onSent?.(sent);
    if (left === 0) return;
    await writable(socket, sender);
  }
}

/** Resolves once the socket can take more; rejects if it closes first. */
function writable(socket: Socket, sender: SocketSender): Promise<void> {
  if (socket.destroyed) return Promise.reject(new SocketClosedError());
  return new Promise<void>((resolve, reject) => {
    const onClose = (): void => {
      // Stops the wait: its callback never runs after close.
      sender.close();
      reject(new SocketClosedError());
    };
    socket.once('close', onClose);
    try {
      sender.waitWritable((status) => {
        socket.off('close', onClose);
        if (status === 0) resolve();
        else reject(new Error(`waiting for the socket to drain failed (uv error ${status})`));
      });
    } catch (error) {
      socket.off('close', onClose);
      reject(error as Error);
    }
  });
}

function sendFileError(errno: number): Error {
  const code = Object.entries(constants.errno).find(([, value]) => value === errno)?.[0] ?? `errno ${errno}`;
  const error = new Error(code === 'ENODATA' ? 'a log file ended inside a file slice being sent' : `sendfile failed: ${code}`) as Error & { code: string };
  error.code = code;
  return error;
}
