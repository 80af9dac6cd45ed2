// `quartet iggy ...` against a real broker started in this process (Iggy listener on a free port).

import assert from 'node:assert/strict';
import net from 'node:net';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { IggyClient } from '../../src/clients/iggy/index.js';
import { main } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/io.js';
import { startBroker, type StartedBroker } from '../conformance/helpers.js';

interface Run {
  code: number;
  out: string;
  err: string;
}

interface RunOptions {
  /** stdin, delivered in these chunks through stdinStream. */
  stdin?: Array<string | Buffer> | AsyncIterable<string | Buffer> | Readable;
  env?: Record<string, string>;
  tty?: boolean;
}

/** The root password startBroker sets (QUARTET_ROOT_PASSWORD). */
const rootPassword = 'root-password';

let broker: StartedBroker;
let addr: string;

async function iggy(argv: string[], options: RunOptions = {}): Promise<Run> {
  let out = '';
  let err = '';
  const io: CliIo = {
    stdout: (t) => void (out += t),
    stderr: (t) => void (err += t),
    readStdin: async () => {
      throw new Error('readStdin must not be called: the iggy commands stream stdin');
    },
    ...(options.stdin !== undefined ? { stdinStream: () => (options.stdin instanceof Readable ? options.stdin : Readable.from(options.stdin!)) } : {}),
    stderrIsTTY: options.tty ?? false,
    env: { QUARTET_IGGY_ADDR: addr, QUARTET_ROOT_PASSWORD: rootPassword, ...(options.env ?? {}) },
    cwd: process.cwd(),
  };
  const code = await main(['iggy', ...argv], io);
  return { code, out, err };
}

/** Runs and requires exit 0; returns stdout. */
async function ok(argv: string[], options: RunOptions = {}): Promise<string> {
  const r = await iggy(argv, options);
  assert.equal(r.code, 0, `quartet iggy ${argv.join(' ')} exited ${r.code}: ${r.err}`);
  return r.out;
}

const lines = (text: string): string[] => text.split('\n').filter((l) => l !== '');

/** A loopback port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('quartet iggy', () => {
  before(async () => {
    broker = await startBroker({ kafka: false, flags: { 'iggy-enabled': true } });
    assert.ok(broker.iggyAddress, 'the Iggy listener started');
    addr = broker.iggyAddress;
  });
  after(async () => {
    await broker?.stop();
  });

  test('help and usage errors (exit 2, no connection needed)', async () => {
    const help = await iggy(['--help']);
    assert.equal(help.code, 0);
    for (const sub of ['ping', 'stream create', 'stream list', 'stream delete', 'topic create', 'topic list', 'topic delete', 'send', 'poll']) {
      assert.match(help.out, new RegExp(`^  ${sub}`, 'm'), sub);
    }
    let top = '';
    assert.equal(await main(['--help'], { ...quietIo(), stdout: (t) => void (top += t) }), 0);
    assert.match(top, /^ {2}iggy <subcommand>/m);
    for (const argv of [
      [],
      ['frobnicate'],
      ['stream'],
      ['stream', 'create'],
      ['stream', 'create', 'a', 'b'],
      ['stream', 'create', 's', '--id', '7'],
      ['topic', 'create', 's'],
      ['topic', 'create', 's', 't', '--partitions', 'two'],
      ['topic', 'create', 's', 't', '--message-expiry', 'soon'],
      ['send', 's'],
      ['send', 's', 't', '--key', 'k', '--headers', 'key=x'],
      ['send', 's', 't', '--key', ''],
      ['poll', 's', 't', '--from', 'sideways'],
      ['poll', 's', 't', '--from', 'timestamp:yesterday'],
      ['poll', 's', 't', '--count', '0'],
      ['poll', 's', 't', '--consumer-group', 'g', '--from', 'first'],
      ['poll', 's', 't', '--frob'],
      ['ping', '--addr', 'nowhere'],
      ['ping', '--token', 'x', '--password', 'y'],
    ]) {
      const r = await iggy(argv);
      assert.equal(r.code, 2, `${argv.join(' ')}: ${r.err}`);
      assert.match(r.err, /^quartet: [^\n]+; see 'quartet help iggy'\n$/, argv.join(' '));
    }
    assert.match((await iggy(['stream', 'create', 's', '--id', '7'])).err, /--id is not supported: Iggy 0\.11's CreateStream carries no id/);
    const noCreds = await iggy(['stream', 'list'], { env: { QUARTET_ROOT_PASSWORD: '' } });
    assert.equal(noCreds.code, 2);
    assert.match(noCreds.err, /no credentials/);
  });

  test('ping, with and without a login', async () => {
    assert.match(await ok(['ping']), /^pong from 127\.0\.0\.1:\d+ in [\d.]+ ms \(server .*, logged in as user id \d+\)\n$/);
    assert.match(await ok(['ping'], { env: { QUARTET_ROOT_PASSWORD: '' } }), /\(not logged in\)/);
    const pong = JSON.parse(await ok(['ping', '--json'])) as { addr: string; ms: number; loggedIn: boolean; userId: number };
    assert.deepEqual([pong.addr, typeof pong.ms, pong.loggedIn, pong.userId], [addr, 'number', true, 0]);
  });

  test('bad password: exit 1 with a one-line message', async () => {
    const r = await iggy(['stream', 'list', '--password', 'wrong']);
    assert.equal(r.code, 1);
    assert.equal(r.out, '');
    assert.equal(r.err, `quartet: login to ${addr} failed: invalid credentials for user "root"\n`);
    const token = await iggy(['stream', 'list', '--token', 'not-a-token']);
    assert.equal(token.code, 1);
    assert.match(token.err, /^quartet: login to .* failed: the token is invalid or expired\n$/);
  });

  test('connection refused: exit 1 with a one-line message', async () => {
    const port = await closedPort();
    const r = await iggy(['stream', 'list', '--addr', `127.0.0.1:${port}`]);
    assert.equal(r.code, 1);
    assert.equal(r.err, `quartet: cannot connect to the Iggy server at 127.0.0.1:${port}: connection refused (is the broker running with its Iggy listener enabled?)\n`);
  });

  test('stream create, list, delete', async () => {
    const created = await ok(['stream', 'create', 'cli-streams']);
    const id = Number(/^created stream 'cli-streams' \(id (\d+)\)\n$/.exec(created)?.[1]);
    assert.ok(Number.isInteger(id), created);
    const dup = await iggy(['stream', 'create', 'cli-streams']);
    assert.equal(dup.code, 1);
    assert.match(dup.err, /^quartet: the server refused: .*streamNameAlreadyExists/);

    const row = lines(await ok(['stream', 'list'])).find((l) => l.split('\t')[1] === 'cli-streams');
    assert.ok(row);
    assert.match(row, new RegExp(`^${id}\\tcli-streams\\t0 topic\\(s\\)\\t0 message\\(s\\)\\t\\d+ B\\t\\d{4}-\\d\\d-\\d\\dT`));
    const json = lines(await ok(['stream', 'list', '--json'])).map((l) => JSON.parse(l) as Record<string, unknown>);
    const entry = json.find((s) => s.name === 'cli-streams');
    assert.deepEqual(Object.keys(entry ?? {}), ['id', 'name', 'topics', 'messages', 'sizeBytes', 'createdAt']);
    assert.equal(entry!.id, id);

    await ok(['stream', 'create', 'cli-streams-2']);
    assert.equal(await ok(['stream', 'delete', 'cli-streams']), `deleted stream 'cli-streams' (id ${id})\n`);
    const id2 = lines(await ok(['stream', 'list'])).find((l) => l.includes('\tcli-streams-2\t'))!.split('\t')[0]!;
    assert.equal(await ok(['stream', 'delete', id2]), `deleted stream 'cli-streams-2' (id ${id2})\n`);
    assert.ok(!(await ok(['stream', 'list'])).includes('cli-streams'));
    const missing = await iggy(['stream', 'delete', 'cli-streams']);
    assert.equal(missing.code, 1);
    assert.equal(missing.err, "quartet: stream 'cli-streams' does not exist\n");
  });

  test('topic create, list, delete', async () => {
    await ok(['stream', 'create', 'cli-topics']);
    assert.match(await ok(['topic', 'create', 'cli-topics', 'orders', '--partitions', '3', '--message-expiry', '1h30m']), /^created topic 'orders' \(id \d+\) in stream 'cli-topics' with 3 partition\(s\)\n$/);
    await ok(['topic', 'create', 'cli-topics', 'events']);
    const rows = lines(await ok(['topic', 'list', 'cli-topics'])).map((l) => l.split('\t'));
    assert.deepEqual(
      rows.map((r) => [r[1], r[2], r[5]]),
      [
        ['orders', '3 partition(s)', 'expiry=90m'],
        // Left to the server: the broker-wide default retention (7 days), as for a Kafka topic.
        ['events', '1 partition(s)', 'expiry=7d'],
      ],
    );
    const json = lines(await ok(['topic', 'list', 'cli-topics', '--json'])).map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(
      json.map((t) => [t.name, t.partitions, t.messageExpiry]),
      [
        ['orders', 3, '90m'],
        ['events', 1, '7d'],
      ],
    );
    assert.match(await ok(['topic', 'delete', 'cli-topics', 'orders']), /^deleted topic 'orders' \(id \d+\) from stream 'cli-topics'\n$/);
    assert.deepEqual(lines(await ok(['topic', 'list', 'cli-topics'])).map((l) => l.split('\t')[1]), ['events']);
    const missing = await iggy(['topic', 'delete', 'cli-topics', 'orders']);
    assert.equal(missing.code, 1);
    assert.equal(missing.err, "quartet: topic 'orders' does not exist in stream 'cli-topics'\n");
    const noStream = await iggy(['topic', 'list', 'no-such-stream']);
    assert.equal(noStream.code, 1);
    assert.equal(noStream.err, "quartet: stream 'no-such-stream' does not exist\n");
  });

  test('send from arguments, poll them back', async () => {
    await ok(['stream', 'create', 'cli-args']);
    await ok(['topic', 'create', 'cli-args', 't', '--partitions', '2']);
    assert.equal(await ok(['send', 'cli-args', 't', 'hello', 'wörld ✓', '--partition', '1']), 'sent 2 messages to cli-args/t\n');
    assert.equal(await ok(['send', 'cli-args', 't', '--key', 'k1', '--', '--not-a-flag']), 'sent 1 message to cli-args/t\n');
    assert.deepEqual(lines(await ok(['poll', 'cli-args', 't', '--partition', '1'])), ['hello', 'wörld ✓']);
    // All partitions: every message once.
    assert.deepEqual(lines(await ok(['poll', 'cli-args', 't'])).sort(), ['--not-a-flag', 'hello', 'wörld ✓']);
    assert.deepEqual(JSON.parse(await ok(['send', 'cli-args', 't', 'x', '--json'])), { sent: 1, stream: 'cli-args', topic: 't' });
    const missing = await iggy(['send', 'cli-args', 'nope', 'x']);
    assert.equal(missing.code, 1);
    assert.equal(missing.err, "quartet: topic 'nope' does not exist in stream 'cli-args'\n");
    // A missing stream is named as such, by send, poll and topic delete alike.
    for (const argv of [['send', 'no-such-stream', 't', 'x'], ['poll', 'no-such-stream', 't'], ['topic', 'delete', 'no-such-stream', 't']]) {
      const r = await iggy(argv);
      assert.deepEqual([r.code, r.err], [1, "quartet: stream 'no-such-stream' does not exist\n"], argv.join(' '));
    }
  });

  test('send 20,000 lines from stdin: progress on stderr, all polled back in order', async () => {
    await ok(['stream', 'create', 'cli-stdin']);
    await ok(['topic', 'create', 'cli-stdin', 'lines']);
    const payloads = Array.from({ length: 20_000 }, (_, i) => `line ${i} ${'x'.repeat(i % 37)} é`);
    // Chunks that split lines (and a multi-byte character) at arbitrary points; CRLF on some lines.
    const text = Buffer.from(payloads.map((p, i) => (i % 5 === 0 ? `${p}\r\n` : `${p}\n`)).join(''), 'utf8');
    const chunks: Buffer[] = [];
    for (let at = 0, size = 1; at < text.length; at += size, size = (size * 7 + 3) % 4093) chunks.push(text.subarray(at, at + size));

    const r = await iggy(['send', 'cli-stdin', 'lines'], { stdin: chunks });
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out, 'sent 20000 messages to cli-stdin/lines\n');
    // A line once 10,000 are sent: the count of the batch that crossed it (a batch that lingered for
    // more input may end anywhere past it), and the last line at 20,000.
    assert.match(r.err, /^sent 1\d{4} messages \(\d+ msg\/s\)$/m);
    assert.match(r.err, /^sent 20000 messages \(\d+ msg\/s\)$/m);
    assert.ok(!r.err.includes('\r'), 'no carriage returns when stderr is not a terminal');

    const polled = await ok(['poll', 'cli-stdin', 'lines', '--partition', '0']);
    assert.deepEqual(polled.split('\n').slice(0, -1), payloads);
    // JSON offsets are 0..19999, in order.
    const offsets = lines(await ok(['poll', 'cli-stdin', 'lines', '--json'])).map((l) => (JSON.parse(l) as { offset: number }).offset);
    assert.deepEqual(offsets, payloads.map((_, i) => i));
  });

  test('a slow stdin is sent as it comes, not when a batch fills or the input ends', async () => {
    await ok(['stream', 'create', 'cli-slow']);
    await ok(['topic', 'create', 'cli-slow', 't']);
    /** Waits until the topic holds `n` messages while the send's stdin is still open. */
    const stored = async (n: number): Promise<void> => {
      const deadline = Date.now() + 10_000;
      for (;;) {
        if (lines(await ok(['poll', 'cli-slow', 't'])).length === n) return;
        if (Date.now() > deadline) throw new Error(`${n} message(s) were not stored while stdin stayed open`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    async function* slowSource(): AsyncGenerator<string> {
      yield 'first\n';
      await stored(1);
      yield 'second\nthi';
      yield 'rd\n';
      await stored(3);
    }
    const r = await iggy(['send', 'cli-slow', 't'], { stdin: slowSource() });
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out, 'sent 3 messages to cli-slow/t\n');
    assert.deepEqual(lines(await ok(['poll', 'cli-slow', 't'])), ['first', 'second', 'third']);
  });

  test('a trickling stdin (a line every 20 ms, never quiet for long) is sent as it comes too', async () => {
    await ok(['stream', 'create', 'cli-trickle']);
    await ok(['topic', 'create', 'cli-trickle', 't']);
    let storedWhileOpen = false;
    let open = true;
    // One light client watching the topic's message count (the event loop must not stall for long).
    const [host, port] = addr.split(':');
    const sdk = new IggyClient({ host: host!, port: Number(port), credentials: { username: 'root', password: rootPassword } });
    await sdk.connect();
    const watcher = (async () => {
      while (open && !storedWhileOpen) {
        if (((await sdk.getTopic('cli-trickle', 't'))?.messagesCount ?? 0n) > 0n) storedWhileOpen = true;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    async function* trickle(): AsyncGenerator<string> {
      // Up to 10 s of lines, until the watcher sees some stored: without a deadline per batch,
      // nothing would be sent before the end of input.
      for (let i = 0; i < 500 && !storedWhileOpen; i++) {
        yield `line-${i}\n`;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      yield 'last\n';
      open = false;
    }
    const r = await iggy(['send', 'cli-trickle', 't'], { stdin: trickle() });
    open = false;
    await watcher;
    await sdk.close();
    assert.equal(r.code, 0, r.err);
    assert.ok(storedWhileOpen, 'lines were stored while stdin still trickled');
    assert.equal(lines(await ok(['poll', 'cli-trickle', 't', '--count', '1000'])).at(-1), 'last');
  });

  test('a missing topic is named as such to a user who may not read streams', async () => {
    await ok(['stream', 'create', 'cli-perm']);
    await ok(['topic', 'create', 'cli-perm', 't']);
    const [host, port] = addr.split(':');
    const sdk = new IggyClient({ host: host!, port: Number(port), credentials: { username: 'root', password: rootPassword } });
    try {
      const none = Object.fromEntries(['manageServers', 'readServers', 'manageUsers', 'readUsers', 'manageStreams', 'readStreams', 'manageTopics', 'readTopics', 'pollMessages', 'sendMessages'].map((k) => [k, false]));
      await sdk.createUser({ username: 'cli-writer', password: 'writer-password', permissions: { global: { ...none, readTopics: true, sendMessages: true } as never, streams: [] } });
    } finally {
      await sdk.close();
    }
    const as = ['--username', 'cli-writer', '--password', 'writer-password'];
    assert.equal(await ok(['send', 'cli-perm', 't', 'x', ...as]), 'sent 1 message to cli-perm/t\n');
    for (const argv of [['send', 'cli-perm', 'typo', 'x'], ['poll', 'cli-perm', 'typo']]) {
      const r = await iggy([...argv, ...as]);
      assert.deepEqual([r.code, r.err], [1, "quartet: topic 'typo' does not exist in stream 'cli-perm'\n"], argv.join(' '));
    }
  });

  test('a send that fails ends the command even while stdin stays open', async () => {
    await ok(['stream', 'create', 'cli-slow-fail']);
    await ok(['topic', 'create', 'cli-slow-fail', 't']);
    const deadline = Date.now() + 10_000;
    async function* neverEnding(): AsyncGenerator<string> {
      yield 'first\n';
      while (lines(await ok(['poll', 'cli-slow-fail', 't'])).length !== 1) {
        if (Date.now() > deadline) throw new Error('the first line was not stored');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await ok(['topic', 'delete', 'cli-slow-fail', 't']);
      yield 'second\n';
      await new Promise(() => undefined); // stdin stays open, nothing more comes
    }
    const stdin = Readable.from(neverEnding());
    const r = await iggy(['send', 'cli-slow-fail', 't'], { stdin });
    assert.equal(r.code, 1);
    assert.ok(stdin.destroyed, 'stdin is ended, so that a process whose stdin stays open can exit');
    assert.match(r.err, /^quartet: sent 1 message\(s\) to cli-slow-fail\/t before a failure\n/);
  });

  test('progress on a terminal is redrawn with \\r and ends with a newline', async () => {
    await ok(['stream', 'create', 'cli-tty']);
    await ok(['topic', 'create', 'cli-tty', 't']);
    const r = await iggy(['send', 'cli-tty', 't'], { stdin: [Array.from({ length: 10_000 }, (_, i) => `m${i}\n`).join('')], tty: true });
    assert.equal(r.code, 0, r.err);
    const eraseLine = '\x1b[K';
    assert.ok(r.err.startsWith('\rsent 10000 messages (') && r.err.endsWith(` msg/s)${eraseLine}\n`), JSON.stringify(r.err));
    const quiet = await iggy(['send', 'cli-tty', 't', '--no-progress'], { stdin: [Array.from({ length: 10_000 }, (_, i) => `m${i}\n`).join('')] });
    assert.equal(quiet.err, '');
  });

  test('poll --from last on several partitions prints the newest messages of the topic, oldest first', async () => {
    await ok(['stream', 'create', 'cli-last']);
    await ok(['topic', 'create', 'cli-last', 't', '--partitions', '3']);
    // One send per message, so that each gets its own time: partitions 0, 1, 2, 0, 1, 2, 0.
    for (let i = 0; i < 7; i++) await ok(['send', 'cli-last', 't', `m${i}`, '--partition', String(i % 3)]);
    assert.deepEqual(lines(await ok(['poll', 'cli-last', 't', '--from', 'last', '--count', '4'])), ['m3', 'm4', 'm5', 'm6']);
    assert.deepEqual(lines(await ok(['poll', 'cli-last', 't', '--from', 'last'])), ['m6']);
    // One partition named: its own newest.
    assert.deepEqual(lines(await ok(['poll', 'cli-last', 't', '--partition', '1', '--from', 'last', '--count', '2'])), ['m1', 'm4']);
  });

  test('poll --from, --count, --json, headers', async () => {
    await ok(['stream', 'create', 'cli-poll']);
    await ok(['topic', 'create', 'cli-poll', 't']);
    const before = new Date().toISOString();
    await ok(['send', 'cli-poll', 't', ...Array.from({ length: 10 }, (_, i) => `m${i}`)]);
    await ok(['send', 'cli-poll', 't', 'with-headers', '--headers', 'trace=abc,tenant=7']);

    assert.deepEqual(lines(await ok(['poll', 'cli-poll', 't', '--from', '3', '--count', '4'])), ['m3', 'm4', 'm5', 'm6']);
    assert.deepEqual(lines(await ok(['poll', 'cli-poll', 't', '--from', 'first', '--count', '2'])), ['m0', 'm1']);
    assert.deepEqual(lines(await ok(['poll', 'cli-poll', 't', '--from', 'last'])), ['with-headers']);
    assert.deepEqual(lines(await ok(['poll', 'cli-poll', 't', '--from', 'last', '--count', '3'])), ['m8', 'm9', 'with-headers']);
    assert.deepEqual(lines(await ok(['poll', 'cli-poll', 't', '--from', '9'])), ['m9', 'with-headers']);
    assert.deepEqual(lines(await ok(['poll', 'cli-poll', 't', '--from', '100'])), []);
    assert.equal(lines(await ok(['poll', 'cli-poll', 't', '--from', `timestamp:${before}`])).length, 11);
    assert.deepEqual(lines(await ok(['poll', 'cli-poll', 't', '--from', 'timestamp:2999-01-01T00:00:00Z'])), []);

    const [json] = lines(await ok(['poll', 'cli-poll', 't', '--from', '10', '--json']));
    const m = JSON.parse(json!) as Record<string, unknown>;
    assert.deepEqual(Object.keys(m), ['partition', 'offset', 'id', 'timestamp', 'timestampMicros', 'originTimestampMicros', 'headers', 'payload']);
    assert.equal(m.partition, 0);
    assert.equal(m.offset, 10);
    assert.match(m.id as string, /^\d+$/);
    assert.notEqual(m.id, '0');
    assert.ok(Date.parse(m.timestamp as string) >= Date.parse(before) - 1000);
    assert.deepEqual(m.headers, { trace: { kind: 'string', value: 'abc' }, tenant: { kind: 'string', value: '7' } });
    assert.equal(Buffer.from(m.payload as string, 'base64').toString(), 'with-headers');

    // User-header bytes that are not a key/value block (the server stores them as sent) print as rawHeaders.
    const [host, port] = addr.split(':');
    const sdk = new IggyClient({ host: host!, port: Number(port), credentials: { username: 'root', password: rootPassword } });
    try {
      await sdk.sendMessages({ streamId: 'cli-poll', topicId: 't', partitioning: { partitionId: 0 }, messages: [{ payload: 'opaque', rawHeaders: Buffer.from('not a TLV block') }] });
    } finally {
      await sdk.close();
    }
    const [opaque] = lines(await ok(['poll', 'cli-poll', 't', '--from', '11', '--json']));
    const o = JSON.parse(opaque!) as Record<string, unknown>;
    assert.deepEqual(o.headers, {});
    assert.equal(Buffer.from(o.rawHeaders as string, 'base64').toString(), 'not a TLV block');
    assert.equal(Buffer.from(o.payload as string, 'base64').toString(), 'opaque');

    const badPartition = await iggy(['poll', 'cli-poll', 't', '--partition', '5']);
    assert.equal(badPartition.code, 1);
    assert.match(badPartition.err, /^quartet: partition 5 does not exist/);
  });

  test('poll --follow prints messages sent after it started, until --count', async () => {
    await ok(['stream', 'create', 'cli-follow']);
    await ok(['topic', 'create', 'cli-follow', 't']);
    await ok(['send', 'cli-follow', 't', 'old']);
    const following = iggy(['poll', 'cli-follow', 't', '--follow', '--count', '4']);
    await ok(['send', 'cli-follow', 't', 'new1', 'new2']);
    await ok(['send', 'cli-follow', 't', 'new3', 'new4']);
    const r = await following;
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(lines(r.out), ['old', 'new1', 'new2', 'new3']);
  });

  test('poll --follow without --count stops on an interrupt (SIGINT/SIGTERM)', async () => {
    await ok(['stream', 'create', 'cli-interrupt']);
    await ok(['topic', 'create', 'cli-interrupt', 't']);
    let interrupt: (() => void) | null = null;
    let out = '';
    const io: CliIo = {
      ...quietIo(),
      env: { QUARTET_IGGY_ADDR: addr, QUARTET_ROOT_PASSWORD: rootPassword },
      // The interrupt arrives once the first message is printed.
      stdout: (t) => {
        out += t;
        interrupt?.();
      },
      onInterrupt: (listener) => {
        interrupt = listener;
        return () => void (interrupt = null);
      },
    };
    const following = main(['iggy', 'poll', 'cli-interrupt', 't', '--follow'], io);
    await ok(['send', 'cli-interrupt', 't', 'only']);
    assert.equal(await following, 0);
    assert.equal(out, 'only\n');
    assert.equal(interrupt, null, 'the interrupt listener is removed');
  });

  test('poll --consumer-group continues where the group stopped', async () => {
    await ok(['stream', 'create', 'cli-group']);
    await ok(['topic', 'create', 'cli-group', 't', '--partitions', '2']);
    await ok(['send', 'cli-group', 't', 'a0', 'a1', 'a2', '--partition', '0']);
    await ok(['send', 'cli-group', 't', 'b0', 'b1', '--partition', '1']);
    const first = lines(await ok(['poll', 'cli-group', 't', '--consumer-group', 'g1', '--count', '2']));
    assert.equal(first.length, 2);
    const rest = lines(await ok(['poll', 'cli-group', 't', '--consumer-group', 'g1']));
    assert.deepEqual([...first, ...rest].sort(), ['a0', 'a1', 'a2', 'b0', 'b1']);
    assert.deepEqual(lines(await ok(['poll', 'cli-group', 't', '--consumer-group', 'g1'])), []);
    // Per partition, the group delivered in offset order.
    const all = [...first, ...rest];
    assert.deepEqual(all.filter((p) => p.startsWith('a')), ['a0', 'a1', 'a2']);
    assert.deepEqual(all.filter((p) => p.startsWith('b')), ['b0', 'b1']);
  });
});

function quietIo(): CliIo {
  return { stdout: () => {}, stderr: () => {}, readStdin: async () => '', env: {}, cwd: process.cwd() };
}
