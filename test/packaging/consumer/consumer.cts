// TypeScript CommonJS consumer: `import x = require(…)` under node16/nodenext, then run.
import main = require('storebridge');
import memory = require('storebridge/adapters/memory');
import client = require('storebridge/client');
import reverse = require('storebridge/reverse');
import demo = require('storebridge/demo');
import conformance = require('storebridge/conformance');
import openapi = require('storebridge/openapi');
import server = require('storebridge/server');
import express = require('express');
import scenarioModule = require('./scenario.cjs');

scenarioModule.scenario({ main, memory, client, reverse, demo, conformance, openapi, server, expressApps: { express } }).then((result) => console.log(JSON.stringify({ flavor: 'ts-cjs', ...result })));
