import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiKey } from '../../../../src/protocols/kafka/codec/api-keys.js';
import {
  decodeRequestHeader,
  requestHeaderVersion,
  responseHeaderVersion,
} from '../../../../src/protocols/kafka/codec/headers.js';

describe('headers', () => {
  it('derives header versions from each API flexible versions', () => {
    assert.equal(requestHeaderVersion(ApiKey.Produce, 8), 1);
    assert.equal(requestHeaderVersion(ApiKey.Produce, 9), 2);
    assert.equal(responseHeaderVersion(ApiKey.Produce, 9), 1);
    assert.equal(requestHeaderVersion(ApiKey.Fetch, 11), 1);
    assert.equal(requestHeaderVersion(ApiKey.Fetch, 12), 2);
    assert.equal(requestHeaderVersion(ApiKey.SaslHandshake, 1), 1);
    assert.equal(requestHeaderVersion(ApiKey.DescribeCluster, 0), 2);
    // ApiVersions: request header v2 from v3, but the response header is always v0.
    assert.equal(requestHeaderVersion(ApiKey.ApiVersions, 3), 2);
    assert.equal(responseHeaderVersion(ApiKey.ApiVersions, 3), 0);
    // Unknown keys read as v1.
    assert.equal(requestHeaderVersion(999, 5), 1);
  });

  it('decodes a null client id and reports truncated headers with the correlation id', () => {
    const ok = decodeRequestHeader(Buffer.from('000300010000002affff', 'hex'));
    assert.ok(ok.ok);
    assert.equal(ok.header.clientId, null);
    assert.equal(ok.header.correlationId, 42);
    const bad = decodeRequestHeader(Buffer.from('000300010000002a0009', 'hex'));
    assert.equal(bad.ok, false);
    if (!bad.ok) assert.equal(bad.correlationId, 42);
    const tiny = decodeRequestHeader(Buffer.from('0003', 'hex'));
    assert.equal(tiny.ok, false);
    if (!tiny.ok) assert.equal(tiny.correlationId, null);
  });
});
