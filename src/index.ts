// The package's public entry point.
export * from './log/types.js';
export { QuartetError, isQuartetError, coreErrorCodes } from './core/errors.js';
export type { CoreErrorCode } from './core/errors.js';
// The Iggy 0.11 SDK (docs/sdk-iggy.md).
export * from './clients/iggy/index.js';
