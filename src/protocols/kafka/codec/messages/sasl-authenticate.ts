// SaslAuthenticate (key 36). Transcribed from apache/kafka SaslAuthenticateRequest.json /
// SaslAuthenticateResponse.json (flexible 2+); franz-go 36_sasl_authenticate.
//
// SaslAuthenticateRequest => AuthBytes
// SaslAuthenticateResponse => ErrorCode ErrorMessage AuthBytes SessionLifetimeMs(v1+)
import { ApiKey } from '../api-keys.js';
import { f, message, type MessageInputOf, type MessageOf } from '../schema.js';

export const saslAuthenticateRequest = message({
  name: 'SaslAuthenticateRequest',
  apiKey: ApiKey.SaslAuthenticate,
  validVersions: '0-2',
  flexibleVersions: '2+',
  fields: [f('authBytes', 'bytes', '0+')],
});

export const saslAuthenticateResponse = message({
  name: 'SaslAuthenticateResponse',
  apiKey: ApiKey.SaslAuthenticate,
  validVersions: '0-2',
  flexibleVersions: '2+',
  fields: [
    f('errorCode', 'int16', '0+'),
    f('errorMessage', 'string', '0+', { nullable: '0+' }),
    f('authBytes', 'bytes', '0+'),
    f('sessionLifetimeMs', 'int64', '1+', { default: '0' }),
  ],
});

export type SaslAuthenticateRequest = MessageOf<typeof saslAuthenticateRequest>;
export type SaslAuthenticateRequestInput = MessageInputOf<typeof saslAuthenticateRequest>;
export type SaslAuthenticateResponse = MessageOf<typeof saslAuthenticateResponse>;
export type SaslAuthenticateResponseInput = MessageInputOf<typeof saslAuthenticateResponse>;
