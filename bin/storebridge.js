#!/usr/bin/env node
'use strict';
require('../dist/lib/cli/main.js').main(process.argv.slice(2));
