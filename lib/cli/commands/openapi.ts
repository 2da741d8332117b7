/**
 * `storebridge openapi [--only webhooks|reverse] [--server URL]`
 *
 * Prints the OpenAPI 3.1 document (JSON) of the store webhooks and the reverse-connection API,
 * generated from the contract's zod schemas (docs/openapi.md).
 */
import { parseArgs } from 'node:util';
import type { CliIO } from '../io';
import { createOpenApiDocument, OPENAPI_PARTS, type OpenApiPart } from '../../openapi';
import { InvalidOptionError } from '../../errors';

export const HELP = `usage: storebridge openapi [options]

Prints the OpenAPI 3.1 document (JSON) of the connector interface, generated from the contract.

options:
  --only PART          webhooks (the store's endpoints) or reverse (the service's {P}/… API);
                       default: both
  --server URL         the server base URL written in servers[0], e.g. https://shop.example.com/sync
  --compact            one line instead of indented JSON
  -h, --help           this text

Example: storebridge openapi --only webhooks --server https://shop.example.com/sync > openapi.json`;

export async function run(args: string[], io: CliIO): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    io.out(HELP);
    return 0;
  }
  const usage = (msg: string) => (io.err(`storebridge openapi: ${msg}\n\n${HELP}`), 2);
  let values;
  try {
    ({ values } = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: { only: { type: 'string' }, server: { type: 'string' }, compact: { type: 'boolean' } },
    }));
  } catch (err) {
    return usage((err as Error).message);
  }
  if (values.only !== undefined && !(OPENAPI_PARTS as readonly string[]).includes(values.only)) {
    return usage(`--only must be ${OPENAPI_PARTS.join(' or ')}, got ${JSON.stringify(values.only.slice(0, 40))}`);
  }
  let doc;
  try {
    doc = createOpenApiDocument({
      ...(values.only ? { include: [values.only as OpenApiPart] } : {}),
      ...(values.server !== undefined ? { serverUrl: values.server } : {}),
    });
  } catch (err) {
    if (err instanceof InvalidOptionError && err.option === 'serverUrl') return usage('--server must be an absolute http(s) URL without credentials, query or fragment');
    throw err;
  }
  io.out(values.compact ? JSON.stringify(doc) : JSON.stringify(doc, null, 2));
  return 0;
}
