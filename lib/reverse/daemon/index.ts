export * from './reverse-daemon';
