export * from './adapter-suite';
export * from './endpoint-checker';
