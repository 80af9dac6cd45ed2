// The shape AlterConfigs (key 33) and IncrementalAlterConfigs (key 44) share: a request of
// resources, each with its config entries, and a response of one result per resource. Only the
// entry differs (IncrementalAlterConfigs adds ConfigOperation), so each API passes its own.
//
// Request  => Resources[ResourceType ResourceName Configs[<entry>]] ValidateOnly
// Response => ThrottleTimeMs Responses[ErrorCode ErrorMessage(nullable) ResourceType ResourceName]
import { f, list, message, type Fields } from '../schema.js';

/** What names an API and its versions: the arguments of `message` but its fields. */
interface ApiHead {
  name: string;
  apiKey: number;
  validVersions: string;
  flexibleVersions: string;
}

/** The request: the resources to alter, each with `entry` fields per config, and ValidateOnly. */
export function configResourcesRequest<const E extends Fields>(head: ApiHead, entry: E) {
  return message({
    ...head,
    fields: [
      list('resources', '0+', [f('resourceType', 'int8', '0+'), f('resourceName', 'string', '0+'), list('configs', '0+', entry)]),
      f('validateOnly', 'bool', '0+'),
    ],
  });
}

/** The response: the throttle time and one result per resource. */
export function configResourcesResponse(head: ApiHead) {
  return message({
    ...head,
    fields: [
      f('throttleTimeMs', 'int32', '0+'),
      list('responses', '0+', [
        f('errorCode', 'int16', '0+'),
        f('errorMessage', 'string', '0+', { nullable: '0+' }),
        f('resourceType', 'int8', '0+'),
        f('resourceName', 'string', '0+'),
      ]),
    ],
  });
}
