/**
 * A test-only third entity, `customers`, registered in the entity registry: the only entity-specific
 * code the third-entity fixture writes besides its adapter. Imported first by the test file (before
 * anything else of the kit), so the tables the kit builds from the registry when its modules load
 * (routes, `EntitySchema`, the client's operation URLs) include it.
 *
 * Its types are not merged into `EntityTypes` (that would make every `Record<Entity, …>` of the kit
 * require a `customers` member in the whole program's typecheck); the fixture reaches it through
 * `CUSTOMERS`, typed as an `Entity`.
 */
import { z } from 'zod';
import { registerEntity, type Entity, type EntityDescriptor } from '../../../lib/contract/entities';
import { AnyWarningsSchema, PagingSchema } from '../../../lib/contract/messages';
import { IdSchema, SkuSchema, TimestampSchema } from '../../../lib/contract/webhook';

export const CustomerSchema = z.object({
  _id: IdSchema,
  last_updated: TimestampSchema.optional(),
  email: SkuSchema.optional(),
  name: z.string().optional(),
  points: z.number().int().optional(),
});
export type Customer = z.infer<typeof CustomerSchema>;

/** The reverse form: points as a decimal string, like the reverse form's quantities. */
export const ReverseCustomerSchema = CustomerSchema.extend({ points: z.string().regex(/^-?\d+$/).optional() });
export type ReverseCustomer = z.infer<typeof ReverseCustomerSchema>;

function toReverse({ points, ...rest }: Customer): ReverseCustomer {
  return points === undefined ? rest : { ...rest, points: String(points) };
}
function toWebhook({ points, ...rest }: ReverseCustomer): Customer {
  return points === undefined ? rest : { ...rest, points: Number(points) };
}

/** The entity, as the kit's code sees it. */
export const CUSTOMERS = 'customers' as unknown as Entity;

registerEntity({
  entity: CUSTOMERS,
  noun: 'customer',
  title: 'Customer',
  schema: CustomerSchema,
  writeBodySchema: CustomerSchema.partial({ _id: true }),
  reverseSchema: ReverseCustomerSchema,
  listResponseSchema: z.object({ paging: PagingSchema, customers: z.array(CustomerSchema) }),
  byIdResponseSchema: z.object({ customer: CustomerSchema }),
  writeSuccessSchema: z.object({ success: z.literal(true), code: z.literal(200), warnings: AnyWarningsSchema, customer: CustomerSchema }),
  pulledSchema: z.object({ customer: ReverseCustomerSchema }),
  pushPageSchema: z.object({ customers: z.array(ReverseCustomerSchema) }),
  toReverse,
  toWebhook,
  keepWebhookOnly: (_stored: Customer, incoming: Customer) => incoming,
  storeAssignsId: false,
  operations: { list: 'listCustomers', get: 'getCustomer', write: 'writeCustomer' },
  naturalKey: 'email',
  checkHook: 'checkCustomer',
  cursorTag: 'c',
  stubMembers: [],
} as unknown as EntityDescriptor<Entity>);
