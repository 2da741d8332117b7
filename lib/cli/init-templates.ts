/**
 * The files `storebridge init` writes: a small CommonJS Express app (no build step) mounting the
 * store router over the chosen adapter, its key from the environment or a key file, and a test that
 * runs the adapter conformance suite and the endpoint checks (`storebridge check`) against it.
 * docs/init.md describes the result.
 */

/** What the app stores its data in. */
export const INIT_ADAPTERS = ['memory', 'sqlite', 'postgres', 'mysql'] as const;
export type InitAdapter = (typeof INIT_ADAPTERS)[number];

export interface ScaffoldOptions {
  /** The npm package name of the app. */
  readonly name: string;
  readonly adapter: InitAdapter;
  /** Serve existing tables through a mapping file (copied to `storebridge-map.json`). */
  readonly mapped: boolean;
  /** The `storebridge` dependency spec (`file:vendor/storebridge-0.1.0.tgz`, `^0.1.0`). */
  readonly storebridge: string;
  /** What the README says about that dependency. */
  readonly storebridgeNote: string;
}

const DRIVERS: Partial<Record<InitAdapter, [string, string]>> = { postgres: ['pg', '^8.11.0'], mysql: ['mysql2', '^3.9.0'] };

const DATABASE_EXAMPLES: Record<Exclude<InitAdapter, 'memory'>, string> = {
  sqlite: 'sqlite:./data/store.db',
  postgres: 'postgres://USER:PASSWORD@127.0.0.1:5432/DATABASE',
  mysql: 'mysql://USER:PASSWORD@127.0.0.1:3306/DATABASE',
};

const LABELS: Record<InitAdapter, string> = { memory: 'the memory adapter', sqlite: 'SQLite', postgres: 'PostgreSQL', mysql: 'MySQL/MariaDB' };

function describeData(o: ScaffoldOptions): string {
  if (o.mapped) return `your existing ${LABELS[o.adapter]} tables, as storebridge-map.json maps them`;
  return o.adapter === 'memory' ? 'the memory adapter (a demo: nothing is kept when the process ends)' : `storebridge's SQL adapter on ${LABELS[o.adapter]}`;
}

function packageJson(o: ScaffoldOptions): string {
  const dependencies: Record<string, string> = { express: '^5.1.0', storebridge: o.storebridge };
  const driver = DRIVERS[o.adapter];
  if (driver) dependencies[driver[0]] = driver[1];
  return `${JSON.stringify(
    {
      name: o.name,
      version: '0.1.0',
      private: true,
      description: `A store app serving the storebridge webhooks over ${describeData(o)}`,
      scripts: { start: 'node server.js', test: 'node --test test/store.test.js' },
      engines: { node: '>=20.12' },
      dependencies: Object.fromEntries(Object.entries(dependencies).sort()),
      devDependencies: { 'fast-check': '^4.0.0' },
      // npm 11 asks before running install scripts: better-sqlite3 (storebridge's SQLite driver) builds or downloads its native module.
      allowScripts: { 'better-sqlite3': true },
    },
    null,
    2,
  )}\n`;
}

const ENV_JS = `'use strict';
/** Loads .env (when there is one) into process.env; what is already set wins. */
const { existsSync } = require('node:fs');
const path = require('node:path');

const file = path.join(__dirname, '.env');
if (existsSync(file)) process.loadEnvFile(file);
`;

const APP_JS = `'use strict';
/**
 * The store app: storebridge's webhook router (GET /products, GET /products/:id, POST /products,
 * the same for /orders) mounted in an Express app. server.js starts it; test/store.test.js checks it.
 */
const express = require('express');
const { createStoreRouter } = require('storebridge/server');

/** An Express app serving the store's webhooks at / to callers presenting one of \`keys\`. */
function createApp({ adapter, keys }) {
  const app = express();
  app.disable('x-powered-by');
  app.use('/', createStoreRouter({ adapter, svcKeys: keys }));
  return app;
}

module.exports = { createApp };
`;

const KEY_JS = `'use strict';
/**
 * The key the sync service sends (in the SvcKey or C2SKey header): read from the file named by
 * STOREBRIDGE_KEY_FILE, else from STOREBRIDGE_KEY. Never logged.
 */
const { readFileSync } = require('node:fs');

function readKey(env = process.env) {
  const key = env.STOREBRIDGE_KEY_FILE ? readFileSync(env.STOREBRIDGE_KEY_FILE, 'utf8').trim() : env.STOREBRIDGE_KEY;
  if (!key) throw new Error('no key: set STOREBRIDGE_KEY_FILE (a file holding the key) or STOREBRIDGE_KEY (see .env.example)');
  return key;
}

module.exports = { readKey };
`;

const SERVER_JS = `'use strict';
/** Starts the store: \`npm start\`. Settings come from the environment (and .env, see .env.example). */
require('./env');
const { createServer } = require('node:http');
const { createApp } = require('./app');
const { openAdapter } = require('./adapter');
const { readKey } = require('./key');

async function main() {
  const key = readKey();
  const adapter = await openAdapter();
  const host = process.env.HOST || '127.0.0.1';
  const port = Number(process.env.PORT || 8080);
  const server = createServer(createApp({ adapter, keys: [key] }));
  server.once('error', (err) => {
    console.error(\`store: cannot listen on \${host}:\${port}: \${err.message}\`);
    process.exit(1);
  });
  server.listen(port, host, () => console.log(\`listening on http://\${host}:\${server.address().port}\`));
  const stop = () => server.close(() => adapter.close().then(() => process.exit(0)));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err) => {
  console.error(\`store: \${err.message}\`);
  process.exitCode = 1;
});
`;

function adapterJs(o: ScaffoldOptions): string {
  const head = `'use strict';\n/** The data adapter: ${describeData(o)}. */\n`;
  if (o.mapped) {
    return `${head}const path = require('node:path');
const { openMappedAdapter } = require('storebridge/adapters/mapped');

const MAP = path.join(__dirname, 'storebridge-map.json');

function databaseUrl(env) {
  if (!env.DATABASE_URL) throw new Error('set DATABASE_URL to the database holding the mapped tables (see .env.example)');
  return env.DATABASE_URL;
}

/** The mapped tables; the start-up check's warnings (a missing paging index: the CREATE INDEX to run) are printed. */
async function openAdapter(env = process.env) {
  const adapter = await openMappedAdapter(databaseUrl(env), MAP);
  for (const warning of adapter.warnings) console.warn(\`storebridge: warning: \${warning}\`);
  return adapter;
}

module.exports = { openAdapter };
`;
  }
  if (o.adapter === 'memory') {
    return `${head}const { createMemoryAdapter } = require('storebridge/adapters/memory');

async function openAdapter() {
  return createMemoryAdapter();
}

/** A fresh, empty adapter for each test. */
async function openTestAdapter() {
  return createMemoryAdapter();
}

async function closeTestAdapter(adapter) {
  await adapter.close();
}

module.exports = { openAdapter, openTestAdapter, closeTestAdapter };
`;
  }
  if (o.adapter === 'sqlite') {
    return `${head}const { openSqlAdapter } = require('storebridge/adapters/sql');

async function openAdapter(env = process.env) {
  return openSqlAdapter(env.DATABASE_URL || '${DATABASE_EXAMPLES.sqlite}');
}

/** A fresh, empty adapter for each test: a private in-memory database. */
async function openTestAdapter() {
  return openSqlAdapter('sqlite::memory:');
}

async function closeTestAdapter(adapter) {
  await adapter.close();
}

module.exports = { openAdapter, openTestAdapter, closeTestAdapter };
`;
  }
  return `${head}const { randomBytes } = require('node:crypto');
const { createSqlAdapter, openSqlAdapter } = require('storebridge/adapters/sql');

function databaseUrl(env) {
  if (!env.DATABASE_URL) throw new Error('set DATABASE_URL to your ${LABELS[o.adapter]} database (see .env.example)');
  return env.DATABASE_URL;
}

async function openAdapter(env = process.env) {
  return openSqlAdapter(databaseUrl(env));
}

/** A fresh, empty adapter for each test: its own tables under a random prefix in DATABASE_URL's database. */
async function openTestAdapter(env = process.env) {
  return createSqlAdapter({ connection: databaseUrl(env), tablePrefix: \`test_\${randomBytes(5).toString('hex')}_\` });
}

/** Drops the test's tables. */
async function closeTestAdapter(adapter) {
  await adapter.dropTables();
  await adapter.close();
}

module.exports = { openAdapter, openTestAdapter, closeTestAdapter };
`;
}

function envExample(o: ScaffoldOptions): string {
  const lines = [
    '# Copy to .env (npm start and npm test read it); variables already set in the environment win.',
    '',
    '# The key the sync service sends in the SvcKey (or C2SKey) header. Prefer a key file:',
    '#   node -e "console.log(require(\'node:crypto\').randomBytes(24).toString(\'base64url\'))" > store.key',
    'STOREBRIDGE_KEY_FILE=./store.key',
    '# or the key itself:',
    '# STOREBRIDGE_KEY=',
    '',
    'HOST=127.0.0.1',
    'PORT=8080',
  ];
  if (o.adapter !== 'memory') lines.push('', `# The ${LABELS[o.adapter]} database${o.mapped ? ' holding the mapped tables' : ''}.`, `DATABASE_URL=${DATABASE_EXAMPLES[o.adapter]}`);
  return `${lines.join('\n')}\n`;
}

/** Whether the tests need a database server (and so DATABASE_URL). */
const needsServer = (o: ScaffoldOptions) => o.mapped || o.adapter === 'postgres' || o.adapter === 'mysql';

function testJs(o: ScaffoldOptions): string {
  const skip = needsServer(o)
    ? `// Without a database to run against the tests are skipped (and say so).
const skip = process.env.DATABASE_URL ? false : 'set DATABASE_URL (see .env.example) to run these tests';
`
    : 'const skip = false;\n';
  const conformance = o.mapped
    ? `// The adapter conformance suite needs fresh, empty tables for every test, so it cannot run on your
// shop's tables: storebridge runs it on the mapped adapter itself (docs/mapping.md). Here the
// endpoint checks run against your data, reading only.
`
    : `// Everything the kit relies on from the adapter: storebridge's adapter conformance suite.
runAdapterConformance({
  describe: (name, fn) => describe(name, { skip }, fn),
  test,
  name: 'the store adapter',
  factory: openTestAdapter,
  teardown: closeTestAdapter,
  propertyRuns: 10,
});
`;
  const app = o.mapped
    ? `describe('the store app', { skip }, () => {
  test('passes storebridge check on the mapped tables (reads only)', async () => {
    const adapter = await openAdapter();
    await checkApp(adapter, { writes: false });
  });
});`
    : `describe('the store app', { skip }, () => {
  test('passes storebridge check, writes included', async () => {
    const adapter = await openTestAdapter();
    try {
      await seedDemo(adapter, 20, AbortSignal.timeout(60_000));
      await checkApp(adapter, { writes: true });
    } finally {
      await closeTestAdapter(adapter);
    }
  });
});`;
  return `'use strict';
/**
 * \`npm test\`: ${o.mapped ? 'the endpoint checks' : 'the adapter conformance suite and the endpoint checks'} (what \`storebridge check\` runs) against the
 * app, served on a free port on 127.0.0.1.
 */
require('../env');
const assert = require('node:assert/strict');
const { randomBytes } = require('node:crypto');
const { once } = require('node:events');
const { describe, test } = require('node:test');
const { checkEndpoints${o.mapped ? '' : ', runAdapterConformance'} } = require('storebridge/conformance');
${o.mapped ? '' : "const { seedDemo } = require('storebridge/demo');\n"}const { createApp } = require('../app');
const ${o.mapped ? '{ openAdapter }' : '{ openTestAdapter, closeTestAdapter }'} = require('../adapter');

${skip}
/** Serves the app over \`adapter\` and runs every endpoint check; fails on any failed "must" check. */
async function checkApp(adapter, { writes }) {
  const key = randomBytes(16).toString('hex');
  const server = createApp({ adapter, keys: [key] }).listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const report = await checkEndpoints({ baseUrl: \`http://127.0.0.1:\${server.address().port}\`, svcKey: key, writes });
    const failed = report.checks.filter((c) => !c.ok && c.level === 'must').map((c) => \`\${c.name}: \${c.detail}\`);
    assert.deepEqual(failed, []);
  } finally {
    server.close();
${o.mapped ? '    await adapter.close();\n' : ''}  }
}

${conformance}
${app}
`;
}

function readme(o: ScaffoldOptions): string {
  const test = o.mapped ? 'the endpoint checks against your tables (reads only)' : 'the adapter conformance suite and the endpoint checks';
  return `# ${o.name}

A store app serving the [storebridge](https://www.npmjs.com/package/storebridge) webhooks
(\`GET /products\`, \`GET /products/:id\`, \`POST /products\`, and the same for \`/orders\`) over
${describeData(o)}.

\`\`\`sh
npm install
npm start
\`\`\`

\`npm start\` reads \`.env\` (copy \`.env.example\` to \`.env\` and set the key first) and prints
\`listening on http://127.0.0.1:8080\`. Then give the sync service that URL and the key, or try it:

\`\`\`sh
npm test                                                        # ${test}
npx storebridge check http://127.0.0.1:8080 --key-file store.key
\`\`\`

| file | what it is |
| --- | --- |
| \`app.js\` | the Express app mounting storebridge's store router |
| \`adapter.js\` | where the data comes from: ${describeData(o)} |
| \`key.js\` | the key, from \`STOREBRIDGE_KEY_FILE\` or \`STOREBRIDGE_KEY\` |
| \`server.js\` | starts the app (\`npm start\`) |
| \`test/store.test.js\` | \`npm test\` (node:test) |
${o.mapped ? '| `storebridge-map.json` | which tables and columns hold the products and orders (docs/mapping.md in the storebridge package) |\n' : ''}
## The storebridge dependency

${o.storebridgeNote}
`;
}

/** The files of the app, by path relative to its folder. */
export function scaffoldFiles(o: ScaffoldOptions): Record<string, string> {
  return {
    'package.json': packageJson(o),
    '.env.example': envExample(o),
    '.gitignore': 'node_modules/\n.env\n*.key\ndata/\n',
    'README.md': readme(o),
    'env.js': ENV_JS,
    'app.js': APP_JS,
    'key.js': KEY_JS,
    'adapter.js': adapterJs(o),
    'server.js': SERVER_JS,
    'test/store.test.js': testJs(o),
  };
}
