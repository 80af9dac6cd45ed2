// The SDKs' error root: every Felix, Cursus and Iggy error class keeps its name, kind, retry flag,
// message and cause, is an instance of its SDK's base class and of ClientError, and answers its
// own SDK's brand guard only.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ClientError, hasBrand } from '../../../src/clients/common/errors.js';
import {
  CursusClientError,
  CursusClosedError,
  CursusConnectionError,
  CursusProtocolError,
  CursusTimeoutError,
  isCursusClientError,
} from '../../../src/clients/cursus/errors.js';
import {
  FelixClientError,
  FelixClosedError,
  FelixConnectionError,
  FelixForbiddenError,
  FelixNotFoundError,
  FelixProtocolError,
  FelixTimeoutError,
  felixError,
  isFelixClientError,
} from '../../../src/clients/felix/errors.js';
import {
  IggyClientError,
  IggyClosedError,
  IggyConnectionError,
  IggyError,
  IggyProtocolError,
  IggyTimeoutError,
  isIggyClientError,
} from '../../../src/clients/iggy/errors.js';

interface Case {
  err: Error & { kind: string };
  name: string;
  kind: string;
  retry: boolean;
  message: string;
}

const cause = new Error('socket reset');
const felix: Case[] = [
  { err: new FelixTimeoutError('publish', 250), name: 'FelixTimeoutError', kind: 'timeout', retry: true, message: 'publish: no answer within 250 ms' },
  { err: new FelixConnectionError('lost', { cause }), name: 'FelixConnectionError', kind: 'connection', retry: true, message: 'lost' },
  { err: new FelixProtocolError('bad frame'), name: 'FelixProtocolError', kind: 'protocol', retry: false, message: 'bad frame' },
  { err: new FelixClosedError(), name: 'FelixClosedError', kind: 'closed', retry: false, message: 'the client is closed' },
  { err: new FelixForbiddenError('forbidden', 'publish'), name: 'FelixForbiddenError', kind: 'server', retry: false, message: 'publish: forbidden' },
];
const cursus: Case[] = [
  { err: new CursusTimeoutError('CONSUME', 250), name: 'CursusTimeoutError', kind: 'timeout', retry: true, message: 'CONSUME: no reply within 250 ms' },
  { err: new CursusConnectionError('lost', { cause }), name: 'CursusConnectionError', kind: 'connection', retry: true, message: 'lost' },
  { err: new CursusProtocolError('bad frame'), name: 'CursusProtocolError', kind: 'protocol', retry: false, message: 'bad frame' },
  { err: new CursusClosedError(), name: 'CursusClosedError', kind: 'closed', retry: false, message: 'the client is closed' },
];
const iggy: Case[] = [
  { err: new IggyTimeoutError('stream.create', 250), name: 'IggyTimeoutError', kind: 'timeout', retry: true, message: 'stream.create: no reply within 250 ms' },
  { err: new IggyConnectionError('lost', { cause }), name: 'IggyConnectionError', kind: 'connection', retry: true, message: 'lost' },
  { err: new IggyProtocolError('bad frame'), name: 'IggyProtocolError', kind: 'protocol', retry: false, message: 'bad frame' },
  { err: new IggyClosedError('closing'), name: 'IggyClosedError', kind: 'closed', retry: false, message: 'closing' },
  { err: new IggyError(1009, 'stream.get'), name: 'IggyError', kind: 'server', retry: false, message: 'stream.get: streamIdNotFound (1009)' },
];

function checkCase(c: Case): void {
  assert.equal(c.err.name, c.name);
  assert.equal(c.err.kind, c.kind);
  assert.equal(c.err.message, c.message);
  assert.ok(c.err instanceof ClientError, `${c.name} is a ClientError`);
  assert.ok(c.err.stack?.startsWith(`${c.name}: ${c.message}`), c.err.stack);
  if (c.kind === 'connection') assert.equal(c.err.cause, cause);
}

describe('SDK errors on the common root', () => {
  it('Felix errors keep their names, kinds, retryable flags and messages', () => {
    for (const c of felix) {
      checkCase(c);
      assert.ok(c.err instanceof FelixClientError && isFelixClientError(c.err));
      assert.equal((c.err as FelixClientError).retryable, c.retry, c.name);
      assert.ok(!isCursusClientError(c.err) && !isIggyClientError(c.err));
    }
    const notFound = felixError('stream not found: tenant=t1 namespace=default stream=orders', 'publish');
    assert.ok(notFound instanceof FelixNotFoundError);
    assert.equal(notFound.name, 'FelixNotFoundError');
  });

  it('Cursus errors keep their names, kinds, retryable flags and messages', () => {
    for (const c of cursus) {
      checkCase(c);
      assert.ok(c.err instanceof CursusClientError && isCursusClientError(c.err));
      assert.equal((c.err as CursusClientError).retryable, c.retry, c.name);
      assert.ok(!isFelixClientError(c.err) && !isIggyClientError(c.err));
    }
  });

  it('Iggy errors keep their names, kinds, retriable flags and messages', () => {
    for (const c of iggy) {
      checkCase(c);
      assert.ok(c.err instanceof IggyClientError && isIggyClientError(c.err));
      assert.equal((c.err as IggyClientError).retriable, c.retry, c.name);
      assert.ok(!isFelixClientError(c.err) && !isCursusClientError(c.err));
    }
  });

  it('hasBrand answers for the Symbol.for key alone, as a second copy of a package would set it', () => {
    const copy = { [Symbol.for('quartet.felix.error')]: true };
    assert.ok(hasBrand(copy, Symbol.for('quartet.felix.error')));
    assert.ok(isFelixClientError(copy));
    assert.ok(!hasBrand(copy, Symbol.for('quartet.iggy.error')));
    assert.ok(!hasBrand(null, Symbol.for('quartet.felix.error')));
    assert.ok(!hasBrand('quartet', Symbol.for('quartet.felix.error')));
  });
});
