// AlterUserScramCredentials (key 51), v0, flexible from v0 (KIP-554). Transcribed from apache/kafka
// AlterUserScramCredentialsRequest.json / ...Response.json.
//
// AlterUserScramCredentialsRequest => Deletions[Name Mechanism(int8)]
//   Upsertions[Name Mechanism(int8) Iterations Salt(bytes) SaltedPassword(bytes)]
// AlterUserScramCredentialsResponse => ThrottleTimeMs Results[User ErrorCode ErrorMessage(nullable)]
import { ApiKey } from '../api-keys.js';
import { f, list, message, type MessageInputOf, type MessageOf } from '../schema.js';

export const alterUserScramCredentialsRequest = message({
  name: 'AlterUserScramCredentialsRequest',
  apiKey: ApiKey.AlterUserScramCredentials,
  validVersions: '0',
  flexibleVersions: '0+',
  fields: [
    list('deletions', '0+', [
      f('name', 'string', '0+'),
      f('mechanism', 'int8', '0+'),
    ]),
    list('upsertions', '0+', [
      f('name', 'string', '0+'),
      f('mechanism', 'int8', '0+'),
      f('iterations', 'int32', '0+'),
      f('salt', 'bytes', '0+'),
      f('saltedPassword', 'bytes', '0+'),
    ]),
  ],
});

export const alterUserScramCredentialsResponse = message({
  name: 'AlterUserScramCredentialsResponse',
  apiKey: ApiKey.AlterUserScramCredentials,
  validVersions: '0',
  flexibleVersions: '0+',
  fields: [
    f('throttleTimeMs', 'int32', '0+'),
    list('results', '0+', [
      f('user', 'string', '0+'),
      f('errorCode', 'int16', '0+'),
      f('errorMessage', 'string', '0+', { nullable: '0+' }),
    ]),
  ],
});

export type AlterUserScramCredentialsRequest = MessageOf<typeof alterUserScramCredentialsRequest>;
export type AlterUserScramCredentialsRequestInput = MessageInputOf<typeof alterUserScramCredentialsRequest>;
export type AlterUserScramCredentialsResponse = MessageOf<typeof alterUserScramCredentialsResponse>;
export type AlterUserScramCredentialsResponseInput = MessageInputOf<typeof alterUserScramCredentialsResponse>;
