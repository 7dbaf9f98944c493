/** Current time as the ISO timestamp every record and audit event carries. */
export type Clock = () => string;

export const systemClock: Clock = () => new Date().toISOString();
