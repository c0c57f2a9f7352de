export * from './client.js';
export * from './time.js';
