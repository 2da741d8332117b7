export * from './demo-data';
export * from './seed-demo';
