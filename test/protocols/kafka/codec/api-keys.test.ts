import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiKey, apiKeyName, isFlexible, supportedApis } from '../../../../src/protocols/kafka/codec/api-keys.js';

describe('api keys', () => {
  it('pins the numbers that are easy to get wrong', () => {
    assert.equal(ApiKey.SaslAuthenticate, 36);
    assert.equal(ApiKey.SaslHandshake, 17);
    assert.equal(ApiKey.ApiVersions, 18);
    assert.equal(ApiKey.DescribeCluster, 60);
    assert.equal(ApiKey.IncrementalAlterConfigs, 44);
    assert.equal(apiKeyName(42), 'DeleteGroups');
    assert.equal(apiKeyName(1000), 'Unknown(1000)');
  });

  it('advertises min 0 for every API (librdkafka < 2.11.1) and the notes ceilings', () => {
    for (const a of supportedApis) assert.equal(a.minVersion, 0, a.name);
    const max = Object.fromEntries(supportedApis.map((a) => [a.name, a.maxVersion]));
    assert.equal(max.Produce, 9);
    assert.equal(max.Fetch, 12);
    assert.equal(max.AddPartitionsToTxn, 3);
    assert.equal(max.EndTxn, 4);
    assert.equal(supportedApis.length, 44);
  });

  it('knows which versions are flexible', () => {
    assert.equal(isFlexible(ApiKey.Metadata, 8), false);
    assert.equal(isFlexible(ApiKey.Metadata, 9), true);
    assert.equal(isFlexible(ApiKey.SaslHandshake, 1), false);
  });
});
