export * from './client.js';
export * from './time.js';
export * from './conditions.js';
export * from './patch.js';
export * from './annotations.js';
