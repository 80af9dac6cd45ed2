// QUIC transport throughput (Felix over @matrixai/quic, src/protocols/felix/quic.ts): one client
// stream carrying 64 KiB writes for `secondsMax` on 127.0.0.1, next to a raw TCP loopback stream and
// raw UDP send loops (1350, 8192 and 65,000-byte datagrams) measured in the same run, as ratios.
// Each QUIC case is one transport setting (UDP payload size, socket buffers), run twice,
// interleaved. Client and server share this process, so every row also prints the MB moved per
// CPU-second of the process (the cost, which a busy machine moves far less than MB/s), the CPU
// used and the time spent waiting for a CPU (/proc/self/schedstat) per wall second, the kernel's
// UDP receive-buffer drops (/proc/net/snmp RcvbufErrors), quiche's sent and lost packets and
// congestion window, and the gaps between the client's sent packets.
//
// Run alone: `npx tsx bench/quic.ts` (or `npm run bench -- quic`). QUARTET_BENCH_QUICK=1: 1 s cases.

import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, connect, type AddressInfo } from 'node:net';
import { createSocket } from 'node:dgram';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Duplex } from 'node:stream';
import { createLogger } from '../src/base/logger.js';
import { connectFelixQuic, startFelixQuicServer, type QuicLimits } from '../src/protocols/felix/quic.js';
import { fmt, percentile } from './harness.js';

const secondsMax = process.env['QUARTET_BENCH_QUICK'] === '1' ? 1 : 2;
const writeBytes = 64 << 10;
const logger = createLogger('error');

interface Figure {
  mbps: number;
  /** CPU seconds per wall second of the process. */
  cpu: number;
  /** Seconds the main thread waited for a CPU (runnable, not running) per wall second. */
  runQueue: number;
  /** MB moved per CPU second of the process: the cost, less sensitive to a busy machine. */
  mbPerCpuSecond: number;
  drops: number;
  note: string;
}

/** UDP receive-buffer drops so far (Linux; 0 elsewhere). */
function udpRcvbufErrors(): number {
  try {
    const lines = readFileSync('/proc/net/snmp', 'utf8').split('\n').filter((l) => l.startsWith('Udp:'));
    const names = lines[0]!.split(/\s+/);
    const values = lines[1]!.split(/\s+/);
    return Number(values[names.indexOf('RcvbufErrors')]);
  } catch {
    return 0;
  }
}

/** Nanoseconds the main thread has waited on a run queue (Linux schedstat; 0 elsewhere). */
function runQueueWaitNs(): number {
  try {
    return Number(readFileSync('/proc/self/schedstat', 'utf8').split(' ')[1]);
  } catch {
    return 0;
  }
}

/** Runs `body`, returning its MB/s with the process's CPU use, run-queue wait and UDP drops meanwhile. */
async function measure(body: () => Promise<{ bytes: number; seconds: number; note?: string }>): Promise<Figure> {
  const drops0 = udpRcvbufErrors();
  const wait0 = runQueueWaitNs();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const r = await body();
  const wall = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  return {
    mbps: r.bytes / r.seconds / 1e6,
    cpu: cpuSeconds / wall,
    runQueue: (runQueueWaitNs() - wait0) / 1e9 / wall,
    mbPerCpuSecond: r.bytes / 1e6 / cpuSeconds,
    drops: udpRcvbufErrors() - drops0,
    note: r.note ?? '',
  };
}

/** 64 KiB writes over one loopback TCP connection for `secondsMax`. */
async function rawTcp(): Promise<{ bytes: number; seconds: number }> {
  let received = 0;
  const server = createServer((s) => s.on('data', (c: Buffer) => (received += c.length)));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const sock = connect((server.address() as AddressInfo).port, '127.0.0.1');
  await once(sock, 'connect');
  const chunk = Buffer.alloc(writeBytes, 0x5a);
  const start = performance.now();
  const deadline = start + secondsMax * 1000;
  let sent = 0;
  while (performance.now() < deadline) {
    sent += chunk.length;
    if (!sock.write(chunk)) await once(sock, 'drain');
  }
  sock.end();
  await once(sock, 'close');
  const seconds = (performance.now() - start) / 1000;
  server.close();
  if (received !== sent) throw new Error(`tcp: ${received} of ${sent} bytes`);
  return { bytes: received, seconds };
}

/**
 * Datagrams of `size` bytes to a loopback UDP socket in the same process for `secondsMax`, with at
 * most 64 KiB (two datagrams at least) sent and not yet received, well inside the default 208 KiB
 * receive buffer: the figure is the cost of one send and one receive per datagram, not of the
 * kernel dropping a flood.
 */
async function rawUdp(size: number): Promise<{ bytes: number; seconds: number; note: string }> {
  const rx = createSocket('udp4');
  let received = 0;
  rx.on('message', (m) => (received += m.length));
  rx.bind(0, '127.0.0.1');
  await once(rx, 'listening');
  const port = rx.address().port;
  const tx = createSocket('udp4');
  const payload = Buffer.alloc(size, 0x5a);
  const start = performance.now();
  const deadline = start + secondsMax * 1000;
  let sent = 0;
  const send = (): Promise<void> => new Promise((resolve, reject) => tx.send(payload, port, '127.0.0.1', (err) => (err ? reject(err) : resolve())));
  const window = Math.max(2, Math.floor((64 << 10) / size));
  const burstSize = Math.min(32, window);
  while (performance.now() < deadline) {
    const burst: Promise<void>[] = [];
    for (let i = 0; i < burstSize; i++) burst.push(send());
    sent += burstSize * size;
    await Promise.all(burst);
    // A datagram the kernel dropped never arrives: each wait is bounded (20 ms).
    const waitUntil = Math.min(deadline, performance.now() + 20);
    while (received < sent - (window - burstSize) * size && performance.now() < waitUntil) await new Promise((r) => setImmediate(r));
  }
  const seconds = (performance.now() - start) / 1000;
  tx.close();
  rx.close();
  return { bytes: received, seconds, note: `${((100 * received) / sent).toFixed(1)}% arrived` };
}

/** 64 KiB writes over one Felix QUIC bidi stream for `secondsMax`, with `limits`. */
async function felixQuic(limits: Partial<QuicLimits>): Promise<{ bytes: number; seconds: number; note: string }> {
  let received = 0;
  let resolveEnd: () => void = () => {};
  const ended = new Promise<void>((r) => (resolveEnd = r));
  const server = await startFelixQuicServer({
    host: '127.0.0.1',
    port: 0,
    limits,
    logger,
    onConnection(c) {
      c.on('bidi', (s: Duplex) => {
        s.on('data', (chunk: Buffer) => (received += chunk.length));
        s.on('end', () => resolveEnd());
        s.on('error', () => resolveEnd());
      });
    },
  });
  const client = await connectFelixQuic({ host: '127.0.0.1', port: server.port, ca: server.certificate, limits, logger });
  const gaps: number[] = [];
  let last = 0;
  // Packet gaps: the client's connection dispatches one send event per UDP packet.
  const conn = (client as unknown as { client: { connection: EventTarget & { conn: QuicheStats } } }).client.connection;
  const cwnds: number[] = [];
  const sampler = setInterval(() => {
    const p = conn.conn.pathStats()[0];
    if (p) {
      cwnds.push(p.cwnd);
    }
  }, 20);
  conn.addEventListener('EventQUICConnectionSend', () => {
    const now = performance.now();
    if (last !== 0) gaps.push(now - last);
    last = now;
  });
  const stream = client.openBidi(writeBytes);
  const chunk = Buffer.alloc(writeBytes, 0x5a);
  const start = performance.now();
  const deadline = start + secondsMax * 1000;
  let sent = 0;
  while (performance.now() < deadline) {
    sent += chunk.length;
    if (!stream.write(chunk)) await once(stream, 'drain');
  }
  stream.end();
  clearInterval(sampler);
  const stats = conn.conn.stats();
  const endDeadline = setTimeout(() => resolveEnd(), 30_000);
  await ended;
  clearTimeout(endDeadline);
  const seconds = (performance.now() - start) / 1000;
  await client.close();
  await server.close();
  gaps.sort((a, b) => a - b);
  cwnds.sort((a, b) => a - b);
  const note = `sent ${stats.sent} lost ${stats.lost} (retransmitted ${(stats.streamRetransBytes / 1e6).toFixed(2)} MB), cwnd p50 ${Math.round(percentile(cwnds, 50) / 1024)} KiB; `
    + `${gaps.length} packets, gap p50 ${fmt(percentile(gaps, 50), 3)} / p90 ${fmt(percentile(gaps, 90), 2)} / p99 ${fmt(percentile(gaps, 99), 2)} ms${received === sent ? '' : `, ${received} of ${sent} bytes`}`;
  return { bytes: received, seconds, note };
}

/** The parts of quiche's connection the bench reads (the library's native binding). */
interface QuicheStats {
  stats(): { sent: number; lost: number; streamRetransBytes: number };
  pathStats(): Array<{ cwnd: number }>;
}

const osDefault = 0;
const quicCases: Array<[string, Partial<QuicLimits>]> = [
  ['1350 B packets (safe on the Internet), OS socket buffers', { udpPayloadBytesMax: 1350, socketBufferBytes: osDefault }],
  ['1350 B packets, 4 MiB socket buffers', { udpPayloadBytesMax: 1350, socketBufferBytes: 4 << 20 }],
  ['8 KiB packets, 4 MiB socket buffers', { udpPayloadBytesMax: 8192, socketBufferBytes: 4 << 20 }],
  ['65,000 B packets (loopback MTU 65,536), OS socket buffers', { udpPayloadBytesMax: 65_000, socketBufferBytes: osDefault }],
  ['65,000 B packets, 4 MiB socket buffers (the loopback default)', { udpPayloadBytesMax: 65_000, socketBufferBytes: 4 << 20 }],
];

const pct = (a: number, b: number): string => `${((100 * a) / b).toFixed(2)}%`;

export async function runQuicBench(): Promise<void> {
  console.log(`\n## QUIC transport: one stream, 64 KiB writes, ${secondsMax} s per case (load average ${loadavg().map((l) => l.toFixed(1)).join(' ')})\n`);
  console.log('| case | MB/s | vs TCP | vs UDP, same datagram size | MB per CPU-second | CPU | run-queue wait | UDP drops | notes |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  const row = (name: string, f: Figure, tcp: Figure | undefined, udp: Figure | undefined): void => {
    console.log(
      `| ${name} | ${fmt(f.mbps, 2)} | ${tcp ? pct(f.mbps, tcp.mbps) : ''} | ${udp ? pct(f.mbps, udp.mbps) : ''} | ${fmt(f.mbPerCpuSecond, 2)} | ${(f.cpu * 100).toFixed(0)}% | ${(f.runQueue * 100).toFixed(0)}% | ${f.drops} | ${f.note} |`,
    );
  };
  const tcp = await measure(rawTcp);
  row('raw TCP, 64 KiB writes', tcp, undefined, undefined);
  const udp = new Map<number, Figure>();
  for (const size of [1350, 8192, 65_000]) {
    const f = await measure(() => rawUdp(size));
    udp.set(size, f);
    row(`raw UDP send loop, ${size} B datagrams`, f, tcp, undefined);
  }
  // Two interleaved trials of each QUIC case: the machine's load moves between cases.
  for (let trial = 1; trial <= 2; trial++) {
    for (const [name, limits] of quicCases) {
      const f = await measure(() => felixQuic(limits));
      row(`QUIC ${name}, trial ${trial}`, f, tcp, udp.get(limits.udpPayloadBytesMax ?? 0));
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await runQuicBench();
