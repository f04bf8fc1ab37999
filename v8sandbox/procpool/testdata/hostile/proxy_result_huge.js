// expect: OUTPUT_LIMIT
// timeout: 5s
// A Proxy that lies about its keys and values during serialization.
new Proxy(
  {},
  {
    ownKeys: () => Array.from({ length: 100 }, (_, i) => "k" + i),
    getOwnPropertyDescriptor: () => ({ enumerable: true, configurable: true }),
    get: () => "y".repeat(100000),
  },
);
