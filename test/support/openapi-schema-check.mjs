// Validates the OpenAPI document read from stdin against the official OpenAPI 3 JSON Schema
// (@seriousme/openapi-schema-validator bundles it). A separate process because the validator
// is an ES module that finds its schemas through import.meta.url, which jest's CommonJS mode
// cannot load. Prints { valid, version, errors } as JSON.
import process from 'node:process';
import { Validator } from '@seriousme/openapi-schema-validator';

let input = '';
for await (const chunk of process.stdin) input += chunk;
const validator = new Validator({ allErrors: true });
const result = await validator.validate(JSON.parse(input));
process.stdout.write(JSON.stringify({ valid: result.valid, version: validator.version, errors: result.errors ?? [] }));
