// One Cursus v1 connection over the Wire v2 handlers (docs/protocols/cursus-v1.md): each v1
// frame body becomes a CursusRequest (a CRQ2 CommandPayload of the parsed arguments, or the CBV2
// equivalent of a 0xBA7C batch), goes through `dispatch` (the v2 dispatcher, which this file
// does not know), and its CursusReply, or the CursusFailure it throws, is written back as the
// bytes a real v1 broker would write.
//
// v1 is serial: the connection calls handle(body) for one frame at a time, in order, and awaits
// it. A body must stay valid until its handle() resolves. v1-only state lives here: the features
// NEGOTIATE enabled (structured errors), the CONSUME offset cache (later CONSUMEs on the socket
// continue where the last one stopped), and the end of the connection after malformed input or
// after a STREAM (an accepted STREAM owns the socket until it closes).

import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../../base/logger.js';
import { isBatchPayload } from '../codec/batch.js';
import { checkKey } from '../codec/primitives.js';
import { isStreamControl } from '../codec/lines.js';
import { cursusError, type CursusError } from '../codec/errors.js';
import { CursusFailure, type CursusReply, type CursusRequest, type CursusStreamSink } from '../handler.js';
import { classifyBody } from './classify.js';
import { lastToken, matchCommand, parseArgs, type V1Command } from './commands.js';
import { decompressV1Body, type V1Compression } from './compression.js';
import { cbv2ToV1Batch, cbv2ToV1Records, v1ReplyBatch } from './convert.js';
import { prepareV1Batch, type V1PreparedBatch } from './publish-batch.js';
import type { V1Record } from './batch.js';
import { enrichErrorResponse, formatV1Error } from './errors.js';
import { v1EpochExactMax, v2EpochOf } from './epochs.js';
import { encodeV1Frame, encodeV1Text, v1FrameBytesMax, v1Keepalive } from './framing.js';
import { atoi, goJson, quote, trimSpace } from './go-text.js';
import { v1Mapping, v2Keys, type V1Mapping } from './mapping.js';
import { helpLine, negotiate, protocolInfoLine, structuredErrorsFeature } from './negotiate.js';
import { renderFailure, renderJson, renderOkLine } from './render.js';

/** Where a session writes: the connection's socket, seen as whole v1 frames. */
export interface V1Output {
  /** Writes whole v1 frames, in order; resolves once the socket took them (or the connection is gone). */
  write(chunks: readonly Buffer[]): Promise<void> | void;
  /** Ends the connection after what was written (v1's answer to malformed input, the end of a STREAM). */
  end(): void;
  /** Aborts when the connection goes away; a STREAM's pushes stop with it. */
  readonly closed: AbortSignal;
}

export interface V1SessionOptions {
  /** The Wire v2 dispatcher: runs a request through the handlers; may throw a CursusFailure. */
  dispatch(request: CursusRequest): Promise<CursusReply>;
  output: V1Output;
  /** The broker-wide compression v1 applies to every inbound body (default none). */
  compression?: V1Compression;
  /** Largest body, after decompression (default v1FrameBytesMax). */
  frameBytesMax?: number;
  /**
   * Decodes and converts a 0xBA7C body (default prepareV1Batch, here): the connection hands a
   * large one to the broker's worker pool. The body is not touched after the call.
   */
  prepareBatch?: (body: Buffer) => V1PreparedBatch | Promise<V1PreparedBatch>;
  logger?: Logger;
}

/** How many topic-partitions the CONSUME offset cache remembers per connection. */
export const offsetCacheEntriesMax = 4096;
/** The longest topic pattern a CONSUME may give (v1's `maxPatternLength`, in bytes). */
export const topicPatternBytesMax = 256;
/** A wildcard CONSUME's records per reply when `batch` is not a positive number (v1's DefaultMaxPollRecords). */
const patternBatchDefault = 8192;
/** A wildcard CONSUME's `wait_ms`, at most (as Wire v2 cuts it), and the tick it looks again at (v1's). */
const patternWaitMsMax = 60_000;
const patternWaitTickMs = 100;

const resumedJoinMapping: V1Mapping = { v2: 'SYNC_GROUP', reply: [] };

type Outcome = { ok: true; reply: CursusReply } | { ok: false; error: CursusError };

/** What a reply is written for: the v1 command, its mapping and arguments, the producer epoch it sent. */
interface ReplyContext {
  name: string;
  mapping: V1Mapping;
  args: ReadonlyMap<string, Buffer>;
  producerEpoch?: bigint;
}

export class V1Session {
  private readonly dispatch: (request: CursusRequest) => Promise<CursusReply>;
  private readonly prepareBatch: (body: Buffer) => V1PreparedBatch | Promise<V1PreparedBatch>;
  private readonly output: V1Output;
  private readonly compression: V1Compression;
  private readonly frameBytesMax: number;
  private readonly logger: Logger | undefined;
  private features: ReadonlySet<string> = new Set();
  private readonly offsetCache = new Map<string, number>();
  private nextRequestId = 1n;
  private done = false;

  constructor(options: V1SessionOptions) {
    this.dispatch = options.dispatch;
    this.prepareBatch = options.prepareBatch ?? prepareV1Batch;
    this.output = options.output;
    this.compression = options.compression ?? 'none';
    this.frameBytesMax = options.frameBytesMax ?? v1FrameBytesMax;
    this.logger = options.logger;
  }

  /** The connection has ended (malformed input, a finished STREAM): later bodies are ignored. */
  get ended(): boolean {
    return this.done;
  }

  /** The features the last NEGOTIATE enabled. */
  get enabledFeatures(): ReadonlySet<string> {
    return this.features;
  }

  /** Handles one frame body: dispatches it and writes what v1 answers. Never rejects. */
  async handle(body: Buffer): Promise<void> {
    if (this.done) return;
    try {
      const data = decompressV1Body(body, this.compression, this.frameBytesMax);
      if (!data.ok) {
        this.logger?.debug('cursus v1 body does not decompress; closing', { reason: data.reason });
        return this.end();
      }
      const kind = classifyBody(data.value);
      switch (kind.kind) {
        case 'batch':
          return await this.publishBatch(data.value);
        case 'internal_batch':
          return await this.text('ERROR: internal_command_unauthorized command=INTERNAL_BATCH');
        case 'decode_failed':
          return await this.text(this.decorate(formatV1Error('decode_failed', [['reason', kind.reason]])));
        case 'malformed':
          await this.text(this.decorate('ERROR: malformed_input reason=missing_topic_or_payload'));
          return this.end();
        case 'command':
          return await this.command(kind.line);
      }
    } catch (e) {
      this.logger?.error('cursus v1 request failed', { error: (e as Error).message });
      await this.safeText(this.decorate(formatV1Error('command_failed', [['reason', 'internal error']])));
    }
  }

  private end(): void {
    this.done = true;
    this.output.end();
  }

  private decorate(line: string): string {
    return this.features.has(structuredErrorsFeature) ? enrichErrorResponse(line) : line;
  }

  private async text(line: string): Promise<void> {
    await this.output.write(encodeV1Text(line));
  }

  private async safeText(line: string): Promise<void> {
    try {
      await this.text(line);
    } catch {
      // The connection is gone; nothing is left to tell.
    }
  }

  private async call(request: CursusRequest): Promise<Outcome> {
    try {
      return { ok: true, reply: await this.dispatch(request) };
    } catch (e) {
      if (e instanceof CursusFailure) return { ok: false, error: e.error };
      this.logger?.error('cursus v1 handler failed', { command: request.command, error: (e as Error).message });
      return { ok: false, error: cursusError('command_failed', [['reason', 'internal error']]) };
    }
  }

  private request(command: string, payload: CursusRequest['payload'], batch: CursusRequest['batch'] = null): CursusRequest {
    return { command, requestId: this.nextRequestId++, payload, batch, dialect: 'v1' };
  }

  // ---- 0xBA7C batches ----

  private async publishBatch(body: Buffer): Promise<void> {
    const prepared = await this.prepareBatch(body);
    if (!prepared.ok) return this.text(this.decorate(prepared.line));
    const outcome = await this.call(this.request('PUBLISH', null, { summary: prepared.summary, bytes: prepared.bytes }));
    const producerEpoch = prepared.producerEpoch;
    return this.reply(outcome, { name: 'PUBLISH', mapping: v1Mapping('PUBLISH'), args: new Map(), ...(producerEpoch !== null ? { producerEpoch } : {}) });
  }

  // ---- text commands ----

  private async command(raw: Buffer): Promise<void> {
    if (trimSpace(raw).length === 0) return this.text(this.decorate('ERROR: empty_command'));
    const cmd = matchCommand(raw);
    if (cmd === null) return this.text(this.decorate(`ERROR: unknown_command command=${quote(trimSpace(raw))}`));
    const name = cmd.entry.name;
    if (cmd.entry.internal === true) return this.text(this.decorate(`ERROR: internal_command_unauthorized command=${name}`));
    const args = parseArgs(cmd.argText);
    switch (name) {
      case 'HELP':
        return this.text(helpLine);
      case 'PROTOCOL_INFO':
        return this.text(protocolInfoLine);
      case 'NEGOTIATE': {
        const outcome = negotiate(args);
        if (outcome.ok) this.features = outcome.features;
        return this.text(outcome.line);
      }
    }
    const mapping = v1Mapping(name);
    for (const [alias, key] of Object.entries(mapping.aliases ?? {})) {
      const v = args.get(alias);
      if (!(args.get(key)?.length ?? 0) && v !== undefined && v.length > 0) args.set(key, v);
    }
    for (const [key, line] of mapping.required ?? []) {
      if (!(args.get(key)?.length ?? 0)) return this.text(this.decorate(line));
    }
    if (name === 'JOIN_GROUP' && (args.get('generation')?.length ?? 0) > 0) return this.resumeJoin(args);
    if (name === 'CONSUME' && isTopicPattern(args.get('topic')!)) return this.consumePattern(cmd, mapping, args);
    if (name === 'CONSUME') this.applyOffsetCache(args);
    const outcome = await this.call(this.request(mapping.v2, { positional: [], fields: this.fields(cmd, mapping, args) }));
    const producerEpoch = atoi(args.get('epoch')?.toString('utf8') ?? '');
    return this.reply(outcome, { name, mapping, args, ...(producerEpoch !== null ? { producerEpoch } : {}) });
  }

  /** The CRQ2 fields of a v1 command (aliases already read): the keys its v2 command accepts. */
  private fields(cmd: V1Command, mapping: V1Mapping, args: ReadonlyMap<string, Buffer>): Map<string, Buffer> {
    const allowed = v2Keys(mapping.v2);
    const out = new Map<string, Buffer>();
    for (const [k, v] of args) if (allowed.has(k) && checkKey(k) === null) out.set(k, v);
    if (mapping.trailingOffsets === true) out.set('offsets', lastToken(cmd.line));
    const epoch = atoi(out.get('epoch')?.toString('utf8') ?? '');
    if (epoch !== null && (epoch > v1EpochExactMax || epoch < -v1EpochExactMax)) out.set('epoch', Buffer.from(String(v2EpochOf(epoch))));
    if (mapping.v2 === 'CONSUME' || mapping.v2 === 'STREAM') {
      // v1 reads a missing group, or "-", as its default group; v2 as no group.
      const group = out.get('group')?.toString('utf8');
      if (group === '' || group === '-') out.delete('group');
    }
    return out;
  }

  /** JOIN_GROUP with generation= is v1's resume of an existing member: v2's SYNC_GROUP. */
  private async resumeJoin(args: ReadonlyMap<string, Buffer>): Promise<void> {
    const generation = args.get('generation')!.toString('utf8');
    if (atoi(generation) === null) return this.text(this.decorate('ERROR: invalid_generation command=JOIN_GROUP'));
    const fields = new Map<string, Buffer>();
    for (const k of ['group', 'member', 'generation', 'topic']) fields.set(k, args.get(k)!);
    const outcome = await this.call(this.request('SYNC_GROUP', { positional: [], fields }));
    if (!outcome.ok || outcome.reply.kind !== 'text') return this.reply(outcome, { name: 'JOIN_GROUP', mapping: resumedJoinMapping, args });
    const assignments = renderOkLine({ v2: 'SYNC_GROUP', reply: ['assignments'] }, outcome.reply.fields, args).slice(2);
    return this.text(`OK generation=${generation} member=${args.get('member')!.toString('utf8')}${assignments} resumed=true`);
  }

  // ---- wildcard CONSUME ----

  /**
   * CONSUME of a topic pattern (`*` any run of characters, `?` one character; v1's
   * matchTopicPattern): the same partition of every topic the pattern matches, in name order,
   * each from its own place (the offset cache, else the group's committed offset or offset=), until
   * `batch` records; all in one 0xBA7C batch named by the pattern. Nothing read and wait_ms given:
   * every topic is looked at again each 100 ms until one has records or the time is up.
   */
  private async consumePattern(cmd: V1Command, mapping: V1Mapping, args: Map<string, Buffer>): Promise<void> {
    const pattern = args.get('topic')!;
    if (pattern.length > topicPatternBytesMax) return this.commandFailed(`topic pattern exceeds maximum length of ${topicPatternBytesMax} characters`);
    const listed = await this.call(this.request('LIST', { positional: [], fields: new Map() }));
    if (!listed.ok) return this.failure(listed.error, 'CONSUME', 'LIST');
    const names = listed.reply.kind === 'text' ? (listed.reply.fields.find(([k]) => k === 'topics')?.[1] ?? '') : '';
    const matcher = patternMatcher(pattern.toString('utf8'));
    const topics = names.split(',').filter((n) => n !== '' && matcher.test(n)).sort(byBytes);
    if (topics.length === 0) return this.commandFailed(`no topics match pattern '${pattern.toString('utf8')}'`);
    const batch = atoi(args.get('batch')?.toString('utf8') ?? '');
    const batchMax = batch !== null && batch > 0n ? Number(batch < 100_000n ? batch : 100_000n) : patternBatchDefault;
    const wait = atoi(args.get('wait_ms')?.toString('utf8') ?? '');
    const waitMs = wait !== null && wait > 0n ? Number(wait < BigInt(patternWaitMsMax) ? wait : BigInt(patternWaitMsMax)) : 0;
    args.delete('wait_ms');
    const records: V1Record[] = [];
    const readAll = async (firstOnly: boolean): Promise<boolean> => {
      for (const topic of topics) {
        if (records.length >= batchMax) break;
        const read = await this.consumeOne(cmd, mapping, args, topic, batchMax - records.length);
        if (read === null) return false;
        records.push(...read);
        if (firstOnly && read.length > 0) break;
      }
      return true;
    };
    if (!(await readAll(false))) return;
    for (const deadline = Date.now() + waitMs; records.length === 0 && Date.now() < deadline && !this.output.closed.aborted; ) {
      await sleep(patternWaitTickMs, undefined, { signal: this.output.closed }).catch(() => undefined);
      if (!(await readAll(true))) return;
    }
    const { partition } = this.topicAndPartition(args);
    const out = v1ReplyBatch(records, pattern, partition);
    if (!out.ok) return this.text(this.decorate(out.line));
    await this.output.write(encodeV1Frame(out.value));
  }

  /** One matched topic of a wildcard CONSUME: its records, or null once a failure was answered. */
  private async consumeOne(cmd: V1Command, mapping: V1Mapping, args: ReadonlyMap<string, Buffer>, topic: string, batch: number): Promise<V1Record[] | null> {
    const topicArgs = new Map(args);
    topicArgs.set('topic', Buffer.from(topic, 'utf8'));
    this.applyOffsetCache(topicArgs);
    const fields = this.fields(cmd, mapping, topicArgs);
    fields.set('batch', Buffer.from(String(batch)));
    const outcome = await this.call(this.request('CONSUME', { positional: [], fields }));
    if (!outcome.ok) {
      await this.failure(outcome.error, 'CONSUME', 'CONSUME');
      return null;
    }
    if (outcome.reply.kind !== 'batch') return [];
    const read = cbv2ToV1Records(outcome.reply.chunks);
    if (!read.ok) {
      await this.text(this.decorate(read.line));
      return null;
    }
    if (read.value.nextOffset !== null) this.rememberOffset(topicArgs, read.value.nextOffset);
    return read.value.records;
  }

  /** v1's answer to a CONSUME that fails outside the read: `command_failed reason="..."`. */
  private commandFailed(reason: string): Promise<void> {
    return this.text(this.decorate(formatV1Error('command_failed', [['reason', reason]])));
  }

  // ---- the CONSUME offset cache ----

  private cacheKey(args: ReadonlyMap<string, Buffer>): string | null {
    const topic = args.get('topic')?.toString('utf8') ?? '';
    const partition = atoi(args.get('partition')?.toString('utf8') ?? '');
    if (topic === '' || partition === null || /[*?]/.test(topic)) return null;
    return `${topic}-${partition}`;
  }

  /** v1 continues a socket's CONSUMEs from the cached next offset and ignores offset= once it has one. */
  private applyOffsetCache(args: Map<string, Buffer>): void {
    const key = this.cacheKey(args);
    const cached = key === null ? undefined : this.offsetCache.get(key);
    if (cached !== undefined) args.set('offset', Buffer.from(String(cached)));
  }

  private rememberOffset(args: ReadonlyMap<string, Buffer>, next: number): void {
    const key = this.cacheKey(args);
    if (key === null) return;
    this.offsetCache.delete(key);
    if (this.offsetCache.size >= offsetCacheEntriesMax) this.offsetCache.delete(this.offsetCache.keys().next().value!);
    this.offsetCache.set(key, next);
  }

  // ---- replies ----

  private async reply(outcome: Outcome, ctx: ReplyContext): Promise<void> {
    if (!outcome.ok) return this.failure(outcome.error, ctx.name, ctx.mapping.v2);
    const reply = outcome.reply;
    switch (reply.kind) {
      case 'text':
        return this.text(renderOkLine(ctx.mapping, reply.fields, ctx.args));
      case 'json':
        return this.text(renderJson(ctx.mapping, reply.value, ctx.producerEpoch));
      case 'none':
        return;
      case 'close':
        await this.text(renderOkLine(ctx.mapping, reply.fields, ctx.args));
        return this.end();
      case 'batch':
        return this.consumeBatch(reply.chunks, ctx.args);
      case 'stream':
        return ctx.name === 'READ_STREAM' ? this.readStream(reply, ctx.args) : this.stream(reply, ctx.args);
    }
  }

  /** A v2 failure as v1's error line; the command it names is the v1 command the client sent. */
  private failure(error: CursusError, name: string, v2: string): Promise<void> {
    const fields = error.fields.map(([k, v]): [string, string] => [k, k === 'command' && v === v2 ? name : v]);
    const line = renderFailure({ ...error, fields });
    // CONSUME writes OFFSET_OUT_OF_RANGE straight to the socket, undecorated.
    return this.text(name === 'CONSUME' && error.code === 'OFFSET_OUT_OF_RANGE' ? line : this.decorate(line));
  }

  private topicAndPartition(args: ReadonlyMap<string, Buffer>, fallback = 0): { topic: Buffer; partition: number } {
    const p = atoi(args.get('partition')?.toString('utf8') ?? '');
    return { topic: args.get('topic') ?? Buffer.alloc(0), partition: p === null ? fallback : Number(BigInt.asIntN(32, p)) };
  }

  private async consumeBatch(chunks: readonly Buffer[], args: ReadonlyMap<string, Buffer>): Promise<void> {
    const { topic, partition } = this.topicAndPartition(args);
    const out = cbv2ToV1Batch(chunks, topic, partition);
    if (!out.ok) return this.text(this.decorate(out.line));
    if (out.value.nextOffset !== null) this.rememberOffset(args, out.value.nextOffset);
    await this.output.write(encodeV1Frame(out.value.chunks));
  }

  /**
   * STREAM: no OK; batches, keepalives (empty frames) and STREAM_CONTROL lines as they come. A
   * refused stream is one error line and the connection goes on; an accepted one owns the
   * connection, which ends with the stream.
   */
  private async stream(reply: Extract<CursusReply, { kind: 'stream' }>, args: ReadonlyMap<string, Buffer>): Promise<void> {
    const { topic, partition } = this.topicAndPartition(args);
    let accepted = false;
    const sink: CursusStreamSink = {
      send: async (payload) => {
        accepted = true;
        await this.output.write(this.streamFrame(payload, topic, partition));
      },
      fail: (error) => this.failure(error, 'STREAM', 'STREAM'),
      closed: this.output.closed,
    };
    try {
      await reply.run(sink);
    } catch (e) {
      this.logger?.error('cursus v1 stream failed', { error: (e as Error).message });
      if (!accepted) await this.safeText(this.decorate(formatV1Error('command_failed', [['reason', 'internal error']])));
    }
    if (accepted) this.end();
  }

  private streamFrame(payload: readonly Buffer[], topic: Buffer, partition: number): Buffer[] {
    let n = 0;
    for (const c of payload) n += c.length;
    if (n === 0) return [v1Keepalive];
    const first = payload.find((c) => c.length > 0)!;
    if (first.length >= 4 && isBatchPayload(first)) {
      const out = cbv2ToV1Batch(payload, topic, partition);
      return out.ok ? encodeV1Frame(out.value.chunks) : encodeV1Text(this.decorate(out.line));
    }
    const whole = Buffer.concat(payload);
    // Wire v2 names a stream closed by a newer STREAM of the same key `removed`; v1 `replaced`.
    if (isStreamControl(whole)) return encodeV1Text(whole.toString('utf8').replace(' reason=removed ', ' reason=replaced '));
    return encodeV1Frame(whole);
  }

  /**
   * READ_STREAM: frame 1 the JSON envelope, frame 2 the batch of events (for the partition frame 1
   * names). A failure is one JSON frame `{"status":"ERROR","error":"<code and details>"}`.
   */
  private async readStream(reply: Extract<CursusReply, { kind: 'stream' }>, args: ReadonlyMap<string, Buffer>): Promise<void> {
    const topic = args.get('topic') ?? Buffer.alloc(0);
    let partition = 0;
    const sink: CursusStreamSink = {
      send: async (payload) => {
        const whole = Buffer.concat(payload);
        if (whole.length > 0 && isBatchPayload(whole)) {
          const out = cbv2ToV1Batch([whole], topic, partition);
          return this.output.write(out.ok ? encodeV1Frame(out.value.chunks) : encodeV1Frame(Buffer.alloc(0)));
        }
        if (isStreamControl(whole)) return this.output.write(encodeV1Frame(whole));
        const json = parseJson(whole);
        if (json !== null && typeof json.partition === 'number') partition = json.partition;
        await this.output.write(json === null ? encodeV1Frame(whole) : encodeV1Text(goJson(json)));
      },
      fail: async (error) => {
        const message = error.message.trim();
        const envelope = message.startsWith('{') ? parseJson(Buffer.from(message)) : null;
        await this.text(goJson(envelope ?? { status: 'ERROR', error: renderFailure(error).slice('ERROR: '.length) }));
      },
      closed: this.output.closed,
    };
    try {
      await reply.run(sink);
    } catch (e) {
      this.logger?.error('cursus v1 READ_STREAM failed', { error: (e as Error).message });
      await this.safeText(goJson({ status: 'ERROR', error: 'command_failed reason="internal error"' }));
    }
  }
}

/** Whether a CONSUME topic is a pattern: it holds `*` or `?`. */
function isTopicPattern(topic: Buffer): boolean {
  return topic.includes(0x2a) || topic.includes(0x3f);
}

/** A topic pattern as an anchored regular expression: `*` any run of characters, `?` one, the rest literal. */
function patternMatcher(pattern: string): RegExp {
  const body = [...pattern].map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[\\^$.|+()[\]{}/]/g, '\\$&'))).join('');
  return new RegExp(`^${body}$`, 'u');
}

/** Go's sort.Strings order: by UTF-8 bytes. */
function byBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

function parseJson(b: Buffer): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(b.toString('utf8'));
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
