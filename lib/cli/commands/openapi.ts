/**
 * `storebridge openapi [--only webhooks|reverse] [--server URL] [--compact]`
 *
 * Prints the OpenAPI 3.1 document (JSON) of the store webhooks and the reverse-connection API,
 * generated from the contract's zod schemas (docs/openapi.md).
 */
import { createOpenApiDocument, OPENAPI_PARTS, type OpenApiPart } from '../../openapi';
import { defineCommand, flagProblem, runCommand, usageError } from '../flags';
import type { CliIO } from '../io';

export const command = defineCommand({
  name: 'openapi',
  usage: '[options]',
  summary: 'Prints the OpenAPI 3.1 document (JSON) of the connector interface, generated from the contract.',
  flags: {
    only: { type: 'string', metavar: 'PART', choices: OPENAPI_PARTS, help: "webhooks (the store's endpoints) or reverse (the service's {P}/… API); default: both" },
    server: { type: 'string', metavar: 'URL', help: 'the server base URL written in servers[0], e.g. https://shop.example.com/sync' },
    compact: { type: 'boolean', help: 'one line instead of indented JSON' },
  },
  epilogue: 'Example: storebridge openapi --only webhooks --server https://shop.example.com/sync > openapi.json',
});

export const HELP = command.help();

export function run(args: string[], io: CliIO): Promise<number> {
  return runCommand(command, args, io, async ({ values }) => {
    let doc;
    try {
      doc = createOpenApiDocument({
        ...(values.only ? { include: [values.only as OpenApiPart] } : {}),
        ...(values.server !== undefined ? { serverUrl: values.server } : {}),
      });
    } catch (err) {
      const problem = flagProblem(err, { serverUrl: '--server', include: '--only' });
      if (problem !== undefined) return usageError(command, io, problem);
      throw err;
    }
    io.out(values.compact ? JSON.stringify(doc) : JSON.stringify(doc, null, 2));
    return 0;
  });
}
