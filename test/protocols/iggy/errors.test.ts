import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { QuartetError, allCoreErrorCodes, assertTableComplete } from '../../../src/base/errors.js';
import { CommandCode, IggyErrorCode, isIggyErrorCode } from '../../../src/protocols/iggy/codec/index.js';
import { FaultyFileSystem } from '../../../src/log/fs.js';
import { ManualClock } from '../../../src/base/clock.js';
import { fullHoldMs } from '../../../src/core/storage-health.js';
import { sendRequest, sid, startIggy } from './harness.js';
import { IggyFailure, iggyCodeOf, iggyErrorTable } from '../../../src/protocols/iggy/errors.js';

describe('iggy error table', () => {
  it('maps every core error to a known Iggy code', () => {
    assertTableComplete(iggyErrorTable, 'iggy error table');
    for (const code of allCoreErrorCodes) assert.ok(isIggyErrorCode(iggyErrorTable[code]), `${code} → ${iggyErrorTable[code]}`);
  });

  it('resolves thrown values: IggyFailure as is, QuartetError by table or override, others as storage errors', () => {
    assert.equal(iggyCodeOf(new IggyFailure(4041)), 4041);
    assert.equal(iggyCodeOf(new QuartetError('unknown_topic')), 2010);
    assert.equal(iggyCodeOf(new QuartetError('invalid_name'), { invalid_name: 2014 }), 2014);
    assert.equal(iggyCodeOf(new Error('disk')), 1);
  });
});

describe('iggy on a full disk', () => {
  it('a SendMessages whose write fails for lack of space answers CannotSaveMessagesToSegment (4006), stores nothing, and the next one goes through', async (t) => {
    const fs = new FaultyFileSystem();
    const clock = new ManualClock();
    const h = await startIggy(t, { clock, broker: { logFs: fs, directWrites: null } });
    await h.broker.createTopic('default', 'full', { partitions: 1 });
    const c = await h.root();
    fs.shortNextWrite(10);
    assert.deepEqual(await c.call(CommandCode.sendMessages, sendRequest(sid('default'), sid('full'), ['lost'])), { status: IggyErrorCode.cannotSaveMessagesToSegment });
    assert.equal(h.broker.storage.full, true);
    assert.equal(h.broker.partition({ topic: 'full' }, 0).stats().nextOffset, 0, 'nothing stored');
    assert.ok('value' in (await c.call(CommandCode.sendMessages, sendRequest(sid('default'), sid('full'), ['kept']))));
    clock.advance(fullHoldMs);
    assert.equal(h.broker.storage.full, false);
    assert.equal(h.broker.partition({ topic: 'full' }, 0).stats().nextOffset, 1);
  });
});
