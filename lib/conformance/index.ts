export * from './adapter-suite';
