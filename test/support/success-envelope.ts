// The success envelope of /api/user and /api/admin (docs/api.md#wire-conventions), asserted one way by every suite.
import { expect } from 'vitest';
import type { ApiResponse } from './http-client.js';

/** Asserts a 200 success envelope and returns the body. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function expectSuccess(res: Pick<ApiResponse, 'status' | 'body'>): any {
  expect({ status: res.status, body: res.body }).toMatchObject({ status: 200, body: { success: 1 } });
  return res.body;
}
