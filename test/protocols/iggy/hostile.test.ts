// Hostile input: for every command code, well-framed requests with random bodies (seeded, so a
// failure replays) from a logged-in client. Each is answered with a reply (status or body) or an
// eviction, the server never crashes, and a bystander connection keeps working throughout.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CommandCode, Operation, commandSpec, encodeRequestHeader, headerBytes, requestBodyChecksum } from '../../../src/protocols/iggy/codec/index.js';
import { sid, startIggy } from './harness.js';
import { mulberry32 } from '../../fixtures/seeded-random.js';

describe('iggy hostile input', () => {
  it('answers random bodies for every command without crashing', async (t) => {
    const seed = Number(process.env.QUARTET_FUZZ_SEED ?? 20261129);
    t.diagnostic(`seed ${seed}`);
    const rand = mulberry32(seed);
    const h = await startIggy(t);
    const bystander = await h.root();
    await bystander.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 2, name: 'fuzz', options: [] });
    const codes = Object.values(CommandCode).filter((c) => c !== CommandCode.loginRegister && c !== CommandCode.loginRegisterWithPat);
    let c = await h.root();
    let answered = 0;
    let evicted = 0;
    for (let round = 0; round < 6; round++) {
      for (const code of codes) {
        const len = Math.floor(rand() * 64);
        const body = Buffer.alloc(len);
        for (let i = 0; i < len; i++) body[i] = rand() < 0.5 ? Math.floor(rand() * 4) : Math.floor(rand() * 256);
        // Plausible prefixes: numeric identifiers of existing objects now and then.
        if (len >= 6 && rand() < 0.5) body.set([1, 4, 0, 0, 0, 0], 0);
        const op = commandSpec(code).operation;
        const header = encodeRequestHeader({
          size: headerBytes + len,
          client: c.clientId,
          request: ++c.requestNo,
          operation: op,
          session: c.session,
          commandCode: code,
          requestChecksum: op >= Operation.createStream && rand() < 0.5 ? requestBodyChecksum(body) : 0n,
        });
        c.write([header, body]);
        const r = await c.next();
        if (r.kind === 'eviction') {
          evicted++;
          await c.whenClosed();
          c = await h.root();
        } else {
          answered++;
          if (r.header.status !== 0) assert.equal(r.body.length, 0, 'a status reply has an empty body');
        }
      }
      assert.ok('value' in (await bystander.call(CommandCode.getStreams, {})), 'bystander keeps working');
    }
    t.diagnostic(`answered ${answered}, evicted ${evicted}`);
    assert.ok(answered > 0);
  });
});
