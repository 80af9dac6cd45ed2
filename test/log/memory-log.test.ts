import { MemoryLog } from '../../src/log/memory-log.js';
import { runLogContract } from './contract.js';

runLogContract('MemoryLog', (config, clock) => Promise.resolve({ log: new MemoryLog(config, { clock }) }), { persistent: false });
