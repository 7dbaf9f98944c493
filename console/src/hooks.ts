import { createContext } from 'preact';
import { useCallback, useContext, useEffect, useState } from 'preact/hooks';
import { UgsError } from './service';

export type Environment = 'Customer' | 'Testing';

/** Who is signed in (the session's API token) and which environment the admin screens show. */
export interface ConsoleContext {
  /**
   * Who is signed in and where the session acts: the API token, or the person (id 0) with the access
   * their identity provider's groups give in that environment; `scope` decides which controls show.
   */
  token: { id: number; name: string; environment: Environment; scope: 'read' | 'write' | 'admin' };
  environment: Environment;
  setEnvironment(environment: Environment): void;
  /** Shows a short confirmation in the page's status region. */
  announce(message: string): void;
}

export const Console = createContext<ConsoleContext | null>(null);

export function useConsole(): ConsoleContext {
  const context = useContext(Console);
  if (!context) throw new Error('useConsole outside the signed-in console');
  return context;
}

/** Loads on mount and whenever `deps` change; `reload` loads again. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  const [state, setState] = useState<{ data?: T; error?: Error; loading: boolean }>({ loading: true });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let current = true;
    setState((previous) => ({ ...previous, loading: true }));
    load().then(
      (data) => current && setState({ data, loading: false }),
      (error: Error) => current && setState({ error, loading: false }),
    );
    return () => {
      current = false;
    };
    // The caller names what the load depends on.
  }, [...deps, round]);
  return { ...state, reload: useCallback(() => setRound((value) => value + 1), []) };
}

/**
 * A cursor-paginated list: the cursors of the pages before this one are kept, so "Previous" goes back
 * exactly; a change of `deps` (a filter, the environment) starts again at the first page.
 */
export function usePages<T>(
  fetchPage: (cursor: string | undefined) => Promise<{ items: T[]; next_cursor: string | null }>,
  deps: unknown[],
) {
  const [cursors, setCursors] = useState<Array<string | undefined>>([undefined]);
  useEffect(() => setCursors([undefined]), deps);
  const cursor = cursors[cursors.length - 1];
  const page = useLoad(() => fetchPage(cursor), [cursor, ...deps]);
  return {
    ...page,
    number: cursors.length,
    previous: cursors.length > 1 ? () => setCursors(cursors.slice(0, -1)) : undefined,
    next: page.data?.next_cursor ? () => setCursors([...cursors, page.data!.next_cursor!]) : undefined,
  };
}

/** The top-level request field an API error names (`tags` for `tags/0`), so the form shows it at that field. */
function fieldOf(error: UgsError): string | undefined {
  return error.field?.split(/[./[]/)[0];
}

/**
 * A form's submission: errors the API ties to a field are shown at that field, others above the form.
 * `run` resolves to the action's result, or undefined when it failed.
 */
export function useSubmit() {
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const run = async <R>(action: () => Promise<R>, fields: readonly string[] = []): Promise<R | undefined> => {
    setBusy(true);
    setErrors({});
    setFailure(undefined);
    try {
      return await action();
    } catch (error) {
      const field = error instanceof UgsError ? fieldOf(error) : undefined;
      if (field && fields.includes(field)) setErrors({ [field]: (error as Error).message });
      else setFailure((error as Error).message);
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  return { errors, failure, busy, run, setErrors };
}

/**
 * An action on one object that waits for a confirmation (a revocation, a deletion): `ask` opens the
 * dialog for its target, `confirm` runs the action and then `after`, unless it failed.
 */
export function useConfirmation<T>(action: (target: T) => Promise<unknown>, after: (target: T) => void) {
  const [pending, setPending] = useState<T | null>(null);
  const submit = useSubmit();
  const confirm = async () => {
    if (pending === null) return;
    const target = pending;
    const done = await submit.run(async () => (await action(target), true));
    setPending(null);
    if (done) after(target);
  };
  return {
    pending,
    ask: setPending,
    cancel: () => setPending(null),
    confirm,
    busy: submit.busy,
    failure: submit.failure,
  };
}
