// The package's public entry point.
export * from './log/types.js';
export { QuartetError, isQuartetError, coreErrorCodes } from './base/errors.js';
export type { CoreErrorCode } from './base/errors.js';
// The Iggy 0.11 SDK (docs/sdk-iggy.md).
export * from './clients/iggy/index.js';
