// Handler tests give a handler only the services its area uses; touching another one is a test
// bug, reported by name instead of as an undefined deep inside the handler.

import type { CursusServices } from '../../../src/protocols/cursus/handler.js';

export function testServices(given: Partial<CursusServices>): CursusServices {
  return new Proxy(given, {
    get(target, key) {
      if (key in target || typeof key === 'symbol') return (target as Record<string | symbol, unknown>)[key];
      throw new Error(`this test gives no Cursus service '${key}'`);
    },
  }) as CursusServices;
}
