// ESM JavaScript consumer: `import` of the main entry and every subpath.
import * as main from 'storebridge';
import * as memory from 'storebridge/adapters/memory';
import * as client from 'storebridge/client';
import * as conformance from 'storebridge/conformance';
import * as contract from 'storebridge/contract';
import * as adapter from 'storebridge/adapter';
import * as openapi from 'storebridge/openapi';
import * as host from 'storebridge/host';
import * as dashboard from 'storebridge/dashboard';
import * as demo from 'storebridge/demo';
import * as reverse from 'storebridge/reverse';
import * as server from 'storebridge/server';
import * as sync from 'storebridge/sync';
import * as sql from 'storebridge/adapters/sql';
import * as mapped from 'storebridge/adapters/mapped';
import express from 'express';
import express4 from 'express4';
import scenarioModule from './scenario.cjs';

const result = await scenarioModule.scenario({ main, memory, client, conformance, contract, adapter, openapi, host, dashboard, demo, reverse, server, sync, sql, mapped, expressApps: { express, express4 } });
console.log(JSON.stringify({ flavor: 'esm', ...result }));
