// The cache and counter service of the core (docs/caches.md): what a front-end imports.

export { CacheService, cacheLimitsDefault, cacheSweepIntervalMsDefault } from './service.js';
export type { CacheEntryView, CacheInfo, CacheLimits, CacheServiceOptions, PutOptions, PutResult, WatchRequest } from './service.js';
export { CacheWatch } from './watch.js';
export type { CacheChange, CacheWatchEnd, CacheWatchFilter } from './watch.js';
export { cacheTopicName, cacheTopicPrefix, counterTopicPrefix, expiredHeader, expiresAtHeader, i64Max, i64Min, shardOfKey } from './records.js';
