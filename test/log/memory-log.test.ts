import { MemoryLog } from '../../src/log/memory-log.js';
import { runLogContract } from './contract.js';

runLogContract('MemoryLog', (config, clock, formats) => Promise.resolve({ log: new MemoryLog(config, { clock, ...(formats ? { formats } : {}) }) }), { persistent: false });
