export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export type JsonObject = { [key: string]: JsonValue };

/** ISO-8601 UTC timestamp with milliseconds, e.g. 2026-11-22T10:00:00.000Z. */
export type Timestamp = string;
