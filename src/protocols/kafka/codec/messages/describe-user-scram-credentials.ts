// DescribeUserScramCredentials (key 50), v0, flexible from v0 (KIP-554). Transcribed from
// apache/kafka DescribeUserScramCredentialsRequest.json / ...Response.json.
//
// DescribeUserScramCredentialsRequest => Users(nullable: all)[Name]
// DescribeUserScramCredentialsResponse => ThrottleTimeMs ErrorCode ErrorMessage(nullable)
//   Results[User ErrorCode ErrorMessage(nullable) CredentialInfos[Mechanism(int8) Iterations]]
import { ApiKey } from '../api-keys.js';
import { f, list, message, type MessageInputOf, type MessageOf } from '../schema.js';

export const describeUserScramCredentialsRequest = message({
  name: 'DescribeUserScramCredentialsRequest',
  apiKey: ApiKey.DescribeUserScramCredentials,
  validVersions: '0',
  flexibleVersions: '0+',
  fields: [list('users', '0+', [f('name', 'string', '0+')], { nullable: '0+' })],
});

export const describeUserScramCredentialsResponse = message({
  name: 'DescribeUserScramCredentialsResponse',
  apiKey: ApiKey.DescribeUserScramCredentials,
  validVersions: '0',
  flexibleVersions: '0+',
  fields: [
    f('throttleTimeMs', 'int32', '0+'),
    f('errorCode', 'int16', '0+'),
    f('errorMessage', 'string', '0+', { nullable: '0+' }),
    list('results', '0+', [
      f('user', 'string', '0+'),
      f('errorCode', 'int16', '0+'),
      f('errorMessage', 'string', '0+', { nullable: '0+' }),
      list('credentialInfos', '0+', [
        f('mechanism', 'int8', '0+'),
        f('iterations', 'int32', '0+'),
      ]),
    ]),
  ],
});

export type DescribeUserScramCredentialsRequest = MessageOf<typeof describeUserScramCredentialsRequest>;
export type DescribeUserScramCredentialsRequestInput = MessageInputOf<typeof describeUserScramCredentialsRequest>;
export type DescribeUserScramCredentialsResponse = MessageOf<typeof describeUserScramCredentialsResponse>;
export type DescribeUserScramCredentialsResponseInput = MessageInputOf<typeof describeUserScramCredentialsResponse>;
