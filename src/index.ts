// The package's public entry point.
export * from './log/types.js';
export { QuartetError, isQuartetError, coreErrorCodes } from './core/errors.js';
export type { CoreErrorCode } from './core/errors.js';
