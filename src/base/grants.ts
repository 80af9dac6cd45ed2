// The shape of a user's grants: what the core's access checks read (src/core/access.ts) and what
// the Iggy codec carries as permissions. Here so that both use one definition without the codec
// importing the core.

export interface GlobalGrants {
  manageServers: boolean;
  readServers: boolean;
  manageUsers: boolean;
  readUsers: boolean;
  manageStreams: boolean;
  readStreams: boolean;
  manageTopics: boolean;
  readTopics: boolean;
  pollMessages: boolean;
  sendMessages: boolean;
}

export interface TopicGrants {
  topicId: number;
  manageTopic: boolean;
  readTopic: boolean;
  pollMessages: boolean;
  sendMessages: boolean;
}

export interface StreamGrants {
  streamId: number;
  manageStream: boolean;
  readStream: boolean;
  manageTopics: boolean;
  readTopics: boolean;
  pollMessages: boolean;
  sendMessages: boolean;
  topics: TopicGrants[];
}

export interface Grants {
  global: GlobalGrants;
  streams: StreamGrants[];
}
