// kcat 1.7.1 (librdkafka 2.0.2, Debian) balanced consumer (-G) against Quartet: FindCoordinator,
// JoinGroup (with the KIP-394 MEMBER_ID_REQUIRED round), SyncGroup, Heartbeat, OffsetFetch,
// OffsetCommit and LeaveGroup as librdkafka sends them. A first run reads every produced record;
// a second run of the same group reads only what was produced since (offsets committed on close).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { kcatClient, run, startBroker, type StartedBroker } from './helpers.js';

const client = kcatClient();

interface KcatRecord {
  topic: string;
  partition: number;
  offset: number;
  key: string | null;
  payload: string | null;
}

function parseJsonLines(text: string): KcatRecord[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as KcatRecord);
}

describe('kcat -G (balanced consumer)', { skip: client.skip, timeout: 40_000 }, () => {
  let b: StartedBroker;
  before(async () => {
    b = await startBroker();
  });
  after(async () => {
    await b?.stop();
  });

  const produce = async (topic: string, lines: string[]): Promise<void> => {
    await run('kcat', ['-b', b.bootstrap, '-P', '-t', topic, '-K:', '-X', 'linger.ms=5'], { input: lines.join('\n') + '\n' });
  };
  const consumeGroup = async (group: string, topic: string): Promise<KcatRecord[]> => {
    const { stdout } = await run('kcat', ['-b', b.bootstrap, '-G', group, topic, '-e', '-J', '-q', '-X', 'auto.offset.reset=earliest', '-X', 'session.timeout.ms=10000'], { timeoutMs: 25_000 });
    return parseJsonLines(stdout);
  };

  it('reads every produced record, then resumes from the committed offsets', async () => {
    const topic = 'kcat-group';
    await b.broker!.createTopic('default', topic, { partitions: 3 });
    const first = Array.from({ length: 30 }, (_, i) => `k${i}:v${i}`);
    await produce(topic, first);
    const read1 = await consumeGroup('kcat-g', topic);
    assert.deepEqual(read1.map((r) => `${r.key}:${r.payload}`).sort(), [...first].sort());
    for (let p = 0; p < 3; p++) {
      const offsets = read1.filter((r) => r.partition === p).map((r) => r.offset);
      assert.deepEqual(offsets, offsets.map((_, i) => i), `partition ${p} in order from 0`);
    }

    const second = Array.from({ length: 9 }, (_, i) => `n${i}:w${i}`);
    await produce(topic, second);
    const read2 = await consumeGroup('kcat-g', topic);
    assert.deepEqual(read2.map((r) => `${r.key}:${r.payload}`).sort(), [...second].sort(), 'only the records produced since the first run');
  });
});
