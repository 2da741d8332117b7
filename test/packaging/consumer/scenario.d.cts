/** Types of scenario.cjs for the TypeScript consumer. */
declare function scenario(modules: Record<string, object> & { expressApps: Record<string, () => unknown> }): Promise<Record<string, unknown>>;
export { scenario };
