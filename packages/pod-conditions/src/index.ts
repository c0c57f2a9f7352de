export * from './model.js';
export * from './sandbox.js';
export * from './events.js';
export * from './duration.js';
export * from './timeline.js';
export * from './explain.js';
export * from './render.js';
