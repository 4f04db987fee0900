import { applyDecorators, createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import type { HttpRequest } from '../http/http-types.js';

/**
 * Client self-identification headers (`<name>@<version>`), in the order they are read: the
 * documented wire name first, then the spelling the published clients send.
 */
export const SDK_VERSION_HEADERS = ['Service-Sdk-Version', 'Crossdeck-Sdk-Version'] as const;

/** The client-version header of a request: the first of SDK_VERSION_HEADERS present and non-empty. */
export function readSdkVersionHeader(headers: Record<string, string | string[] | undefined>): string | undefined {
  for (const name of SDK_VERSION_HEADERS) {
    const value = headers[name.toLowerCase()];
    if (typeof value === 'string' && value.trim() !== '') return value;
  }
  return undefined;
}

/** Handler parameter: the raw client-version header (either spelling), or undefined. */
export const SdkVersionHeader = createParamDecorator((_data: unknown, ctx: ExecutionContext): string | undefined =>
  readSdkVersionHeader(ctx.switchToHttp().getRequest<HttpRequest>().headers),
);

/** OpenAPI: documents both spellings of the client-version header on an endpoint. */
export function ApiSdkVersionHeaders(description: string) {
  return applyDecorators(
    ...SDK_VERSION_HEADERS.map((name, i) =>
      ApiHeader({ name, required: false, description: i === 0 ? description : `Same as ${SDK_VERSION_HEADERS[0]} (the spelling the published clients send)` }),
    ),
  );
}
