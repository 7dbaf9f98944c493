// A leaf module (it imports nothing): the wire schemas, and so the client, use the bound too.

/**
 * The largest schema or data-source id: ids are numbers of their workspace from 1 to 2^31 − 1, so
 * that they fit a 32-bit signed integer in every client language (the hosted product's are far
 * smaller). A chosen id outside it is refused by the request schema; an automatic one past it is
 * `ids_exhausted`.
 */
export const MAX_CATALOGUE_ID = 2_147_483_647;
