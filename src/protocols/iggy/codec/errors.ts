// The Iggy status / error codes the server sends: in ReplyHeader.status (pre-commit denials, empty
// body) and in the result section of result-framed replies (`01000000 00000000 code`). Numbers
// from specs/iggy-0.11-server-notes.md §9 (core/common/src/error/iggy_error.rs). The lead maps the
// core errors onto these in src/protocols/iggy/errors.ts.

export const IggyErrorCode = {
  error: 1,
  invalidCommand: 3,
  invalidFormat: 4,
  featureUnavailable: 5,
  invalidIdentifier: 6,
  /** Also "user not found" and "personal access token not found". */
  resourceNotFound: 20,
  staleClient: 30,
  unauthenticated: 40,
  unauthorized: 41,
  invalidCredentials: 42,
  invalidUsername: 43,
  invalidPassword: 44,
  userAlreadyExists: 46,
  userInactive: 47,
  cannotDeleteUser: 48,
  cannotChangePermissions: 49,
  personalAccessTokenAlreadyExists: 51,
  invalidPersonalAccessToken: 53,
  invalidPersonalAccessTokenExpiry: 56,
  transientNotCommitted: 57,
  transientNotAccepted: 58,
  requestAlreadyApplied: 59,
  clientNotFound: 100,
  streamIdNotFound: 1009,
  streamNameNotFound: 1010,
  streamNameAlreadyExists: 1012,
  invalidStreamName: 1013,
  invalidTopicSize: 1019,
  tooManyStreams: 1020,
  topicIdNotFound: 2010,
  topicNameNotFound: 2011,
  topicNameAlreadyExists: 2013,
  invalidTopicName: 2014,
  tooManyPartitions: 2015,
  invalidPartitionsCount: 2019,
  tooManyTopics: 2021,
  partitionNotFound: 3007,
  partitionIdSpaceExhausted: 3013,
  /** A SendMessages whose write failed (a full disk, an I/O error). */
  cannotSaveMessagesToSegment: 4006,
  consumerOffsetNotFound: 3021,
  invalidMessagesCount: 4009,
  tooBigUserHeaders: 4017,
  tooBigMessagePayload: 4022,
  tooManyMessages: 4023,
  emptyMessagePayload: 4024,
  invalidMessageChecksum: 4027,
  invalidBatchChecksum: 4039,
  invalidHeaderKind: 4040,
  unsupportedOptionKey: 4041,
  invalidOptionValue: 4042,
  optionsBlockTooLarge: 4043,
  invalidOffset: 4100,
  invalidReservedField: 4101,
  consumerGroupIdNotFound: 5000,
  consumerGroupNameNotFound: 5003,
  consumerGroupNameAlreadyExists: 5004,
  consumerGroupMemberNotFound: 5006,
  consumerGroupPartitionNotOwned: 5009,
  alreadyAuthenticated: 14000,
  invalidSession: 14001,
  incompatibleProtocolVersion: 14003,
} as const;

export type IggyErrorName = keyof typeof IggyErrorCode;
export type IggyErrorCode = (typeof IggyErrorCode)[IggyErrorName];

const nameByCode: ReadonlyMap<number, IggyErrorName> = new Map(
  (Object.entries(IggyErrorCode) as Array<[IggyErrorName, number]>).map(([name, code]) => [code, name]),
);

/** The table name of a code, or undefined for codes this server never sends. */
export function iggyErrorName(code: number): IggyErrorName | undefined {
  return nameByCode.get(code);
}

export function isIggyErrorCode(code: number): code is IggyErrorCode {
  return nameByCode.has(code);
}
