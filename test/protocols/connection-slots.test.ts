import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConnectionSlots, peerAddressOf, type Admission, type Slot } from '../../src/protocols/connection-slots.js';

function admitted<T>(a: Admission<T>): { slot: Slot<T>; evicted: T | null } {
  if ('refused' in a) assert.fail(`refused: ${a.refused}`);
  return { slot: a.admitted, evicted: a.evicted?.holder ?? null };
}

test('a full set evicts its oldest unauthenticated slot; one full of authenticated slots refuses', () => {
  const slots = new ConnectionSlots<string>({ connectionsMax: 3, unauthenticatedMax: 10, perPeerMax: 0 });
  const a = admitted(slots.admit('p', 'a')).slot;
  admitted(slots.admit('p', 'b'));
  admitted(slots.admit('p', 'c'));
  slots.authenticated(a);
  const d = admitted(slots.admit('p', 'd'));
  assert.equal(d.evicted, 'b', 'the oldest unauthenticated, not the authenticated a');
  assert.equal(slots.size, 3);
  const e = admitted(slots.admit('p', 'e'));
  assert.equal(e.evicted, 'c');
  slots.authenticated(d.slot);
  slots.authenticated(e.slot);
  assert.deepEqual(slots.admit('p', 'f'), { refused: 'full' });
  assert.equal(slots.size, 3);
});

test('the unauthenticated limit evicts too; a logout makes a slot the newest unauthenticated one', () => {
  const slots = new ConnectionSlots<string>({ connectionsMax: 100, unauthenticatedMax: 2, perPeerMax: 0 });
  const a = admitted(slots.admit('p', 'a')).slot;
  const b = admitted(slots.admit('p', 'b')).slot;
  slots.authenticated(a);
  admitted(slots.admit('p', 'c'));
  slots.unauthenticated(a);
  assert.equal(slots.unauthenticatedCount, 3, 'a logout may exceed the limit; the next admission makes room');
  assert.equal(admitted(slots.admit('p', 'd')).evicted, 'b');
  assert.equal(b.released, true);
  assert.equal(slots.unauthenticatedCount, 3);
  assert.equal(admitted(slots.admit('p', 'e')).evicted, 'c');
  assert.equal(admitted(slots.admit('p', 'f')).evicted, 'a', 'a went to the back when it logged out');
});

test('the per-peer limit refuses without evicting, counts each peer apart, and frees on release (once)', () => {
  const slots = new ConnectionSlots<string>({ connectionsMax: 100, unauthenticatedMax: 100, perPeerMax: 2 });
  const a = admitted(slots.admit('10.0.0.1', 'a')).slot;
  admitted(slots.admit('10.0.0.1', 'b'));
  assert.deepEqual(slots.admit('10.0.0.1', 'c'), { refused: 'peer' });
  admitted(slots.admit('10.0.0.2', 'd'));
  slots.release(a);
  slots.release(a);
  assert.equal(slots.peerCount('10.0.0.1'), 1);
  assert.equal(slots.size, 2);
  admitted(slots.admit('10.0.0.1', 'e'));
  assert.deepEqual(slots.admit('10.0.0.1', 'f'), { refused: 'peer' });
});

test('a per-peer limit of 0 is no limit', () => {
  const slots = new ConnectionSlots<number>({ connectionsMax: 1000, unauthenticatedMax: 1000, perPeerMax: 0 });
  for (let i = 0; i < 500; i++) admitted(slots.admit('p', i));
  assert.equal(slots.peerCount('p'), 500);
});

test('peer addresses: IPv4-mapped IPv6 counts as the IPv4 address', () => {
  assert.equal(peerAddressOf('::ffff:192.0.2.7'), '192.0.2.7');
  assert.equal(peerAddressOf('192.0.2.7'), '192.0.2.7');
  assert.equal(peerAddressOf('2001:db8::1'), '2001:db8::1');
  assert.equal(peerAddressOf(undefined), 'unknown');
});
