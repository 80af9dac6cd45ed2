// Node 20 lacks Promise.withResolvers (ES2024), which @platformatic/kafka 2.x calls
// (kafka-broker-notes.md §1). platformatic-kafka.ts imports it before the client; a no-op on Node 22+.
declare global {
  interface PromiseConstructor {
    withResolvers?<T>(): { promise: Promise<T>; resolve: (value: T | PromiseLike<T>) => void; reject: (reason?: unknown) => void };
  }
}

if (typeof Promise.withResolvers !== 'function') {
  Object.defineProperty(Promise, 'withResolvers', {
    configurable: true,
    writable: true,
    value: function withResolvers<T>() {
      let resolve!: (value: T | PromiseLike<T>) => void;
      let reject!: (reason?: unknown) => void;
      const promise = new Promise<T>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      return { promise, resolve, reject };
    },
  });
}

export {};
