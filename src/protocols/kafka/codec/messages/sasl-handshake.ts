// SaslHandshake (key 17). Transcribed from apache/kafka SaslHandshakeRequest.json /
// SaslHandshakeResponse.json (versions 0-1, never flexible); franz-go 17_sasl_handshake.
//
// SaslHandshakeRequest => Mechanism
// SaslHandshakeResponse => ErrorCode Mechanisms[string]
// v0: raw SASL tokens follow on the connection (int32 length + token, kafka-python 2.0.2);
// v1: tokens travel in SaslAuthenticate.
import { ApiKey } from '../api-keys.js';
import { arr, f, message, type MessageInputOf, type MessageOf } from '../schema.js';

export const saslHandshakeRequest = message({
  name: 'SaslHandshakeRequest',
  apiKey: ApiKey.SaslHandshake,
  validVersions: '0-1',
  flexibleVersions: 'none',
  fields: [f('mechanism', 'string', '0+')],
});

export const saslHandshakeResponse = message({
  name: 'SaslHandshakeResponse',
  apiKey: ApiKey.SaslHandshake,
  validVersions: '0-1',
  flexibleVersions: 'none',
  fields: [f('errorCode', 'int16', '0+'), arr('mechanisms', 'string', '0+')],
});

export type SaslHandshakeRequest = MessageOf<typeof saslHandshakeRequest>;
export type SaslHandshakeRequestInput = MessageInputOf<typeof saslHandshakeRequest>;
export type SaslHandshakeResponse = MessageOf<typeof saslHandshakeResponse>;
export type SaslHandshakeResponseInput = MessageInputOf<typeof saslHandshakeResponse>;
