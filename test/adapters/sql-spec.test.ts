import { createSqlAdapter, openSqlAdapter, redactConnectionSpec } from '../../adapters/sql';
import { parseSqlSpec } from '../../adapters/sql/sql-connect';
import { InvalidOptionError } from '../../lib/errors';

describe('SQL connection specs', () => {
  test.each([
    ['sqlite:./data/store.db', 'sqlite', './data/store.db'],
    ['sqlite::memory:', 'sqlite', ':memory:'],
    ['postgres:postgres://u@h:5432/db', 'postgres', 'postgres://u@h:5432/db'],
    ['postgres://u@h:5432/db', 'postgres', 'postgres://u@h:5432/db'],
    ['postgresql://u@h/db', 'postgres', 'postgresql://u@h/db'],
    ['postgres:postgresql://u@h/db', 'postgres', 'postgresql://u@h/db'],
    ['mysql:mysql://root@127.0.0.1:3306/test', 'mysql', 'mysql://root@127.0.0.1:3306/test'],
    ['mysql://root@127.0.0.1/test', 'mysql', 'mysql://root@127.0.0.1/test'],
    ['mariadb://root@127.0.0.1/test', 'mysql', 'mysql://root@127.0.0.1/test'],
    ['mariadb:mariadb://root@h/test', 'mysql', 'mysql://root@h/test'],
  ])('%s', (spec, kind, target) => {
    expect(parseSqlSpec(spec)).toEqual({ kind, target });
  });

  test('tablePrefix and schema ride in the URL and are not sent to the driver', () => {
    expect(parseSqlSpec('postgres://u@h/db?tablePrefix=shop_&schema=sync&sslmode=disable')).toEqual({
      kind: 'postgres',
      target: 'postgres://u@h/db?sslmode=disable',
      tablePrefix: 'shop_',
      schema: 'sync',
    });
    expect(parseSqlSpec('mysql://root@h/test?tablePrefix=a_')).toEqual({ kind: 'mysql', target: 'mysql://root@h/test', tablePrefix: 'a_' });
  });

  test.each(['sqlite:', 'postgres:mysql://h/db', 'mysql:postgres://h/db', 'postgres:not a url', 'oracle://h/db'])('refuses %s', (spec) => {
    expect(() => parseSqlSpec(spec)).toThrow(InvalidOptionError);
  });

  test('passwords never appear in printed specs or errors', async () => {
    expect(redactConnectionSpec('postgres://alice:s3cr3t@db:5432/x')).toBe('postgres://alice:***@db:5432/x');
    expect(redactConnectionSpec('mysql:mysql://root:hunter2@h/db?password=again&x=1')).toBe('mysql:mysql://root:***@h/db?password=***&x=1');
    expect(() => parseSqlSpec('postgres:mysql://bob:hunter2@h/db')).toThrow(/^(?!.*hunter2)/s);
    // Port 1 on loopback: nothing listens, the connection is refused at once.
    const err = await openSqlAdapter('postgres://bob:hunter2@127.0.0.1:1/db').catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/cannot open postgres:\/\/bob:\*\*\*@127\.0\.0\.1:1\/db/);
    expect((err as Error).message).not.toContain('hunter2');
    const err2 = await openSqlAdapter('mysql://bob:hunter2@127.0.0.1:1/db').catch((e: Error) => e);
    expect((err2 as Error).message).not.toContain('hunter2');
  });

  test('options are checked and named', async () => {
    await expect(createSqlAdapter({ connection: 'sqlite::memory:', tablePrefix: 'bad-prefix' })).rejects.toThrow(/invalid option "tablePrefix"/);
    await expect(createSqlAdapter({ connection: 'sqlite::memory:', schema: 'x' })).rejects.toThrow(/invalid option "schema"/);
    await expect(createSqlAdapter({})).rejects.toThrow(/exactly one of db, dialect or connection/);
  });
});
