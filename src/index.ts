export * from './core/board/index.js';
export * from './core/errors.js';
