// The shared request pipeline on its own, over a real loopback socket: a line protocol whose
// requests are released by the test, so that order, barriers, back-pressure and the ways a
// connection ends are observed directly.

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { after, describe, it } from 'node:test';
import { createLogger } from '../../src/base/logger.js';
import { replySliceBytes } from '../../src/protocols/file-replies.js';
import { RequestPipeline, type PipelineOptions, type ReplyOrder, type Slot } from '../../src/protocols/pipeline.js';

const logger = createLogger('error');

interface Started {
  line: string;
  slot: Slot;
  /** Answers the request with `text` (default: the line itself). */
  answer(text?: string, closeAfter?: boolean): void;
}

/** One server connection running a pipeline whose requests are lines, and the client socket. */
async function linePipeline(options: { order?: ReplyOrder; inFlightMax?: number; readAheadMax?: number; serial?: boolean } = {}) {
  const server: Server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  after(() => server.close());
  const accepted = once(server, 'connection') as Promise<[Socket]>;
  const client = connect((server.address() as { port: number }).port, '127.0.0.1');
  after(() => client.destroy());
  const [socket] = await accepted;
  const started: Started[] = [];
  const released: string[] = [];
  const done: Array<'ok' | 'error' | undefined> = [];
  let closedHook = 0;
  let pauses = 0;
  const pause = socket.pause.bind(socket);
  socket.pause = () => {
    pauses++;
    return pause();
  };
  const pipelineOptions: PipelineOptions = {
    logger,
    inFlightMax: () => options.inFlightMax ?? 16,
    readAheadMax: () => options.readAheadMax ?? 1,
    order: options.order ?? 'ordered',
    fileSlices: false,
    endDrainMs: 300,
  };
  const pipeline: RequestPipeline<string> = new RequestPipeline<string>(
    socket,
    {
      start: (line) => {
        const slot = pipeline.open((outcome) => done.push(outcome), { barrier: options.serial === true || line.startsWith('serial') });
        return new Promise<void>((settled) => {
          started.push({
            line,
            slot,
            answer: (text = line, closeAfter = false) => {
              pipeline.reply(slot, [Buffer.from(`${text}\n`)], { closeAfter });
              settled();
            },
          });
        });
      },
      release: (line) => void released.push(line),
      closed: () => void closedHook++,
    },
    pipelineOptions,
  );
  let partial = '';
  socket.on('data', (chunk: Buffer) => {
    const text = partial + chunk.toString();
    const lines = text.split('\n');
    partial = lines.pop()!;
    pipeline.push(lines);
  });
  let received = '';
  client.setEncoding('utf8').on('data', (s: string) => (received += s));
  return {
    pipeline,
    socket,
    client,
    started,
    released,
    done,
    closedHook: () => closedHook,
    pauses: () => pauses,
    received: () => received,
    send: (...lines: string[]) => client.write(lines.map((l) => `${l}\n`).join('')),
  };
}

async function until(what: string, check: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

describe('request pipeline', () => {
  it('starts pipelined requests in order and writes their replies in request order (ordered)', async () => {
    const p = await linePipeline();
    p.send('a', 'b', 'c');
    await until('three started', () => p.started.length === 3);
    p.started[2]!.answer();
    p.started[1]!.answer();
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(p.received(), '', 'b and c wait for a');
    p.started[0]!.answer();
    await until('three replies', () => p.received() === 'a\nb\nc\n');
    assert.deepEqual(p.done, ['ok', 'ok', 'ok']);
    await until('frames released', () => p.released.length === 3);
  });

  it('a muted connection starts no request until the mute ends (quota throttling)', async () => {
    const p = await linePipeline({ readAheadMax: 4 });
    p.send('a');
    await until('a started', () => p.started.length === 1);
    const muteMs = 150;
    p.started[0]!.slot.onWritten(() => p.pipeline.muteFor(muteMs));
    p.started[0]!.answer();
    await until('a answered', () => p.received() === 'a\n');
    const mutedAt = Date.now();
    p.send('b');
    await until('b started after the mute', () => p.started.length === 2, 5_000);
    assert.ok(Date.now() - mutedAt >= muteMs - 20, `b started ${Date.now() - mutedAt} ms after the mute began`);
    p.started[1]!.answer();
    await until('b answered', () => p.received() === 'a\nb\n');
  });

  it('writes each reply as soon as it is ready (as-ready)', async () => {
    const p = await linePipeline({ order: 'as-ready' });
    p.send('a', 'b');
    await until('two started', () => p.started.length === 2);
    p.started[1]!.answer();
    await until('b first', () => p.received() === 'b\n');
    p.started[0]!.answer();
    await until('then a', () => p.received() === 'b\na\n');
  });

  it('holds every later request behind a barrier until its reply is written; serial runs one at a time', async () => {
    const p = await linePipeline();
    p.send('serial-login', 'x', 'y');
    await until('the barrier started', () => p.started.length === 1);
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(p.started.length, 1, 'nothing starts behind the barrier');
    p.started[0]!.answer();
    await until('the rest started', () => p.started.length === 3);
    const s = await linePipeline({ serial: true, readAheadMax: 8 });
    s.send('1', '2', '3');
    for (let i = 1; i <= 3; i++) {
      await until(`request ${i} started`, () => s.started.length === i);
      await new Promise((r) => setTimeout(r, 10));
      assert.equal(s.started.length, i, 'one at a time');
      s.started[i - 1]!.answer();
    }
    await until('every reply', () => s.received() === '1\n2\n3\n');
  });

  it('pauses reading at inFlightMax and resumes as replies drain', async () => {
    const p = await linePipeline({ inFlightMax: 2 });
    p.send('a', 'b', 'c');
    await until('two started', () => p.started.length === 2);
    assert.ok(p.pauses() > 0, 'reading paused');
    assert.deepEqual(p.pipeline.waitingFrames(), ['c']);
    p.started[0]!.answer();
    await until('c started', () => p.started.length === 3);
    p.started[1]!.answer();
    p.started[2]!.answer();
    await until('all replies', () => p.received() === 'a\nb\nc\n');
  });

  it('holdInput pauses reading until released, and a release does not resume what something else holds', async () => {
    const p = await linePipeline({ inFlightMax: 1, readAheadMax: 4 });
    p.pipeline.holdInput(true);
    assert.equal(p.socket.isPaused(), true, 'held: not read');
    p.send('a');
    p.pipeline.holdInput(false);
    assert.equal(p.socket.isPaused(), false, 'released: read again');
    await until('a started', () => p.started.length === 1);
    // Paused at inFlightMax: a hold and its release leave it paused until a reply drains.
    p.pipeline.holdInput(true);
    p.pipeline.holdInput(false);
    assert.equal(p.socket.isPaused(), true, 'still paused by the request in flight');
    p.started[0]!.answer();
    await until('a answered', () => p.received() === 'a\n');
    assert.equal(p.socket.isPaused(), false);
  });

  it('endWith writes its last bytes after the replies in flight, drops waiting frames, and ends', async () => {
    const p = await linePipeline({ inFlightMax: 1, readAheadMax: 4 });
    p.send('a', 'b');
    await until('a started, b waiting', () => p.started.length === 1 && p.pipeline.waitingFrames().length === 1);
    let ended = false;
    p.pipeline.endWith(Buffer.from('bye\n'), () => (ended = true));
    assert.equal(p.released.includes('b'), true, 'the waiting frame is dropped and released');
    assert.equal(ended, false, 'not before the reply in flight');
    p.started[0]!.answer();
    await once(p.client, 'end');
    assert.equal(p.received(), 'a\nbye\n');
    assert.equal(ended, true);
  });

  it('a closeAfter reply ends the connection at once; requests behind it are done with an error', async () => {
    const p = await linePipeline();
    p.send('a', 'b');
    await until('two started', () => p.started.length === 2);
    p.started[1]!.answer();
    p.started[0]!.answer('no', true);
    await once(p.client, 'end');
    assert.equal(p.received(), 'no\n');
    assert.deepEqual(p.done, ['ok', 'error']);
    assert.equal(p.closedHook(), 1);
  });

  it('finishInput answers what was read, then runs its continuation', async () => {
    const p = await linePipeline({ inFlightMax: 1, readAheadMax: 4 });
    p.send('a', 'b');
    await until('b read', () => p.started.length + p.pipeline.waitingFrames().length === 2);
    let then = 0;
    p.pipeline.finishInput(() => then++);
    assert.equal(p.pipeline.accepting, false);
    p.started[0]!.answer();
    await until('b started', () => p.started.length === 2);
    assert.equal(then, 0);
    p.started[1]!.answer();
    await until('the continuation', () => then === 1);
    await until('both replies', () => p.received() === 'a\nb\n');
  });

  it('close lets requests in flight finish (whenIdle) and starts nothing more', async () => {
    const p = await linePipeline({ inFlightMax: 1, readAheadMax: 4 });
    p.send('a', 'b');
    await until('a started', () => p.started.length === 1);
    p.pipeline.close();
    let idle = false;
    void p.pipeline.whenIdle().then(() => (idle = true));
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(idle, false);
    p.started[0]!.answer();
    await until('idle', () => idle);
    assert.equal(p.started.length, 1, 'b never started');
    assert.equal(p.received(), 'a\n');
  });

  it('when the socket goes, unanswered requests are done with an error and a late reply only releases', async () => {
    const p = await linePipeline();
    p.send('a');
    await until('a started', () => p.started.length === 1);
    let afterWrite = 0;
    p.started[0]!.slot.onWritten(() => afterWrite++);
    p.client.destroy();
    await once(p.socket, 'close');
    assert.deepEqual(p.done, ['error']);
    assert.equal(p.closedHook(), 1);
    p.started[0]!.answer();
    assert.equal(afterWrite, 1, 'the late reply ran its afterWrite');
  });

  it('writes a reply of more than replySliceBytes a slice at a time, the event loop turning between slices, in order', async () => {
    const p = await linePipeline({ readAheadMax: 4 });
    // Every socket write, with how many event-loop turns had passed when it was made.
    const writes: Array<{ bytes: number; turn: number }> = [];
    let turns = 0;
    let ticking = true;
    const tick = (): void => {
      turns++;
      if (ticking) setImmediate(tick);
    };
    const write = p.socket.write.bind(p.socket) as (chunk: Buffer, cb?: (error?: Error | null) => void) => boolean;
    p.socket.write = ((chunk: Buffer, cb?: (error?: Error | null) => void) => {
      writes.push({ bytes: chunk.length, turn: turns });
      return write(chunk, cb);
    }) as typeof p.socket.write;
    p.send('a', 'big', 'c');
    await until('three started', () => p.started.length === 3);
    const big = 'x'.repeat(5 * replySliceBytes + 17);
    let bigWritten = 0;
    p.started[1]!.slot.onWritten(() => bigWritten++);
    setImmediate(tick);
    p.started[0]!.answer();
    p.started[1]!.answer(big);
    p.started[2]!.answer();
    await until('every reply', () => p.received().length === 2 + big.length + 1 + 2, 10_000);
    ticking = false;
    assert.equal(p.received(), `a\n${big}\nc\n`, 'the bytes and their order');
    assert.deepEqual(p.done, ['ok', 'ok', 'ok']);
    assert.equal(bigWritten, 1);
    const large = writes.filter((w) => w.bytes > 2);
    assert.ok(large.length >= 6, `the large reply went out in ${large.length} writes`);
    for (const w of large) assert.ok(w.bytes <= replySliceBytes, `a write of ${w.bytes} bytes`);
    for (let i = 1; i < large.length; i++) assert.ok(large[i]!.turn > large[i - 1]!.turn, `slice ${i} was written in the same turn of the event loop as the one before`);
  });

  it('a peer that goes while a large reply is being sliced out: the request is done with an error and its afterWrite runs', async () => {
    const p = await linePipeline();
    p.client.pause();
    p.send('a');
    await until('a started', () => p.started.length === 1);
    let afterWrite = 0;
    p.started[0]!.slot.onWritten(() => afterWrite++);
    p.started[0]!.answer('y'.repeat(16 * replySliceBytes));
    await until('the first slices are in the socket', () => p.socket.writableLength > 0 || p.socket.bytesWritten > 0);
    p.client.destroy();
    // Unread bytes make the close a reset: the server socket sees an error, then its close.
    await new Promise((resolve) => p.socket.once('close', resolve));
    await until('done', () => p.done.length === 1);
    assert.deepEqual(p.done, ['error']);
    assert.equal(afterWrite, 1);
  });

  it('an endWith peer that never reads is destroyed after endDrainMs', async () => {
    const p = await linePipeline();
    p.client.pause();
    const big = 'z'.repeat(4 * 1024 * 1024);
    p.send('a');
    await until('a started', () => p.started.length === 1);
    p.started[0]!.answer(big);
    const at = Date.now();
    p.pipeline.endWith(Buffer.from('bye\n'));
    await once(p.socket, 'close');
    assert.ok(Date.now() - at >= 250, 'not before endDrainMs');
  });
});
