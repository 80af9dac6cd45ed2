// The Felix client's options: the address forms, the defaults of the notes' pools and of the
// auth offer, and values refused before anything connects.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultClientFeatures, resolveOptions } from '../../../src/clients/felix/options.js';
import { Feature, knownFlags } from '../../../src/protocols/felix/codec/index.js';

describe('resolveOptions', () => {
  it('defaults to 127.0.0.1:5000, the reference pools and every flag and feature but topology and redirect', () => {
    const o = resolveOptions({ ca: 'PEM' });
    assert.deepEqual([o.host, o.port, o.serverName, o.tenantId, o.namespace], ['127.0.0.1', 5000, 'localhost', 'default', 'default']);
    assert.deepEqual([o.publishPool, o.cachePool, o.eventConnections], [{ connections: 4, streamsPerConnection: 2 }, { connections: 8, streamsPerConnection: 4 }, 8]);
    assert.equal(o.clientFlags, knownFlags);
    assert.equal(o.clientFeatures, defaultClientFeatures);
    assert.equal(defaultClientFeatures & (Feature.topology | Feature.redirect), 0);
    assert.equal(defaultClientFeatures | Feature.topology | Feature.redirect, 0x3ff);
  });

  it('reads host:port and [v6]:port; host and port override addr', () => {
    assert.deepEqual([resolveOptions({ ca: '', addr: 'broker:5001' }).host, resolveOptions({ ca: '', addr: 'broker:5001' }).port], ['broker', 5001]);
    assert.equal(resolveOptions({ ca: '', addr: '[::1]:5002' }).host, '::1');
    const o = resolveOptions({ ca: '', addr: 'a:1', host: 'b', port: 2 });
    assert.deepEqual([o.host, o.port], ['b', 2]);
  });

  it('keeps a legacy offer (clientFlags null) and refuses what cannot be sent or used', () => {
    assert.equal(resolveOptions({ ca: '', clientFlags: null }).clientFlags, null);
    assert.throws(() => resolveOptions({ ca: '', addr: 'no-port' }), RangeError);
    assert.throws(() => resolveOptions({ ca: '', clientFlags: 0x1_0000 }), RangeError);
    assert.throws(() => resolveOptions({ ca: '', pools: { publish: { connections: 0 } } }), RangeError);
    assert.throws(() => resolveOptions({ ca: '', requestTimeoutMs: 1.5 }), RangeError);
  });
});
