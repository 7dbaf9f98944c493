import { AppError } from './errors.js';
import { scopeIncludes, type Caller, type Scope } from './tenancy.js';

export function requireScope(caller: Caller, needed: Scope): void {
  if (!scopeIncludes(caller.scope, needed)) {
    throw new AppError('insufficient_scope', `This operation needs an API token with the "${needed}" scope.`);
  }
}
