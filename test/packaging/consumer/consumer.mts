// TypeScript ESM consumer: typechecked against the shipped .d.ts (node16, nodenext, bundler), then run.
import * as main from 'storebridge';
import * as memory from 'storebridge/adapters/memory';
import * as client from 'storebridge/client';
import * as conformance from 'storebridge/conformance';
import * as contract from 'storebridge/contract';
import * as openapi from 'storebridge/openapi';
import * as demo from 'storebridge/demo';
import * as reverse from 'storebridge/reverse';
import * as server from 'storebridge/server';
import express from 'express';
import scenarioModule from './scenario.cjs';

const result = await scenarioModule.scenario({ main, memory, client, conformance, contract, openapi, demo, reverse, server, expressApps: { express } });
console.log(JSON.stringify({ flavor: 'ts-esm', ...result }));
