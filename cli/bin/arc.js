#!/usr/bin/env node
// arc: the command-line client of the CRM service (see cli/README.md).
import { main } from '../src/main.js';

process.exitCode = await main(process.argv);
