const REQUEST_ID = /^req_[0-9a-f]{24}$/;

type ErrorResponse = { status: number; body: any; headers: Record<string, string> };

/** The error envelope with its code, a request id equal to the X-Request-Id header, and a message. */
export function expectError(res: ErrorResponse, status: number, code: string): void {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(res.headers['x-request-id']).toMatch(REQUEST_ID);
  expect(res.body.error.request_id).toBe(res.headers['x-request-id']);
  expect(typeof res.body.error.message).toBe('string');
}

/** `expectError` and the envelope's `type` (`invalid_request_error`, `authentication_error`, ...). */
export function expectTypedError(res: ErrorResponse, status: number, type: string, code: string): void {
  expectError(res, status, code);
  expect(res.body.error.type).toBe(type);
}
