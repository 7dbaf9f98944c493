import { failure } from '../errors.js';
import { scopeIncludes, type Caller, type Scope } from '../tenancy.js';

export function requireScope(caller: Caller, needed: Scope): void {
  if (!scopeIncludes(caller.scope, needed)) {
    throw failure.insufficientScope(needed);
  }
}
