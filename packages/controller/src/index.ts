export * from './options/config-file.js';
export * from './options/flags.js';
export * from './webhook/tls-files.js';
export * from './webhook/server.js';
export * from './webhook/dev-certificates.js';
