/**
 * Validating JSON against the OpenAPI document with a real JSON Schema validator (Ajv, draft
 * 2020-12, strict mode): the document is added whole, and each body is checked against the schema
 * at its JSON pointer (`#/paths/…/responses/200/content/application~1json/schema`).
 */
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import type { OpenApiDocument } from '../../lib/openapi';

const DOC_ID = 'https://storebridge.test/openapi.json';

/** JSON pointer escaping of one segment. */
export const pointer = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

export class DocumentValidator {
  readonly ajv: Ajv2020;
  private readonly cache = new Map<string, ValidateFunction>();

  constructor(readonly doc: OpenApiDocument) {
    this.ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true });
    // The document's own members are not JSON Schema keywords: declare them so strict mode accepts the wrapper.
    for (const k of ['openapi', 'info', 'jsonSchemaDialect', 'servers', 'tags', 'paths', 'components']) this.ajv.addKeyword(k);
    this.ajv.addSchema({ $id: DOC_ID, ...JSON.parse(JSON.stringify(doc)) });
  }

  /** The validator of the schema at a JSON pointer inside the document. */
  at(jsonPointer: string): ValidateFunction {
    let v = this.cache.get(jsonPointer);
    if (!v) {
      v = this.ajv.compile({ $ref: `${DOC_ID}#${jsonPointer}` });
      this.cache.set(jsonPointer, v);
    }
    return v;
  }

  /** Pointer of the response body schema of one operation and status; throws when undocumented. */
  responsePointer(method: string, path: string, status: number): string {
    const op = (this.doc.paths[path] as Record<string, { responses?: Record<string, unknown> }> | undefined)?.[method.toLowerCase()];
    if (!op) throw new Error(`${method} ${path} is not in the document`);
    if (!op.responses?.[String(status)]) throw new Error(`${method} ${path} answered ${status}, which the document does not list (${Object.keys(op.responses ?? {}).join(', ')})`);
    return `/paths/${pointer(path)}/${method.toLowerCase()}/responses/${status}/content/application~1json/schema`;
  }

  /** Errors of `body` against the documented response schema, as text ('' when valid). */
  checkResponse(method: string, path: string, status: number, body: unknown): string {
    const v = this.at(this.responsePointer(method, path, status));
    return v(body) ? '' : this.ajv.errorsText(v.errors, { dataVar: 'body' });
  }

  /** Every `[method, path, status]` the document lists. */
  documentedResponses(): string[] {
    const out: string[] = [];
    for (const [path, item] of Object.entries(this.doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        if (method === 'parameters') continue;
        for (const status of Object.keys((op as { responses: object }).responses)) out.push(`${method.toUpperCase()} ${path} ${status}`);
      }
    }
    return out;
  }
}

/** A regular expression matching concrete URL paths of an OpenAPI path template. */
export function templateRegex(template: string): RegExp {
  const escaped = template.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${escaped.join('[^/]+')}$`);
}
