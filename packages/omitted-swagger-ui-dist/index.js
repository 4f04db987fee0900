'use strict';
// See package.json: the service never serves Swagger UI (SwaggerModule.setup runs with ui: false).
throw new Error('swagger-ui-dist is not installed: the API reference at /docs is served with Redoc (libs/platform/src/openapi/openapi.ts)');
