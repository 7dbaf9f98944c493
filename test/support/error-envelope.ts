// The failure envelope every refusal has (docs/api.md#wire-conventions), asserted one way by every suite.
import { expect } from 'vitest';
import type { ApiResponse } from './http-client.js';

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * Asserts the failure envelope: status, code, a non-empty message, request_id equal to the
 * X-Request-Id header, and nothing else (but a sync's `line` or `index` of the group at fault). `field`: a string must match; null must be absent;
 * undefined leaves it unchecked.
 */
export function expectError(res: ApiResponse, status: number, code: string, field?: string | null): void {
  expect({ status: res.status, code: res.body?.error?.code }, res.raw).toEqual({ status, code });
  expect(Object.keys(res.body).sort()).toEqual(['error', 'success']);
  expect(res.body.success).toBe(0);
  const { error } = res.body;
  for (const key of Object.keys(error))
    expect(['code', 'message', 'field', 'line', 'index', 'request_id']).toContain(key);
  expect(typeof error.message).toBe('string');
  expect(error.message.trim()).not.toBe('');
  expect(typeof error.request_id).toBe('string');
  expect(error.request_id).not.toBe('');
  expect(error.request_id).toBe(res.headers['x-request-id']);
  expect(res.headers['content-type']).toBe(JSON_CONTENT_TYPE);
  if (field === null) expect(error).not.toHaveProperty('field');
  else if (field !== undefined) expect(error.field).toBe(field);
}
