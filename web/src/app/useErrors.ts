// The page's error banner: what failed to load or run, and anything that escaped to an unhandled rejection.
import { useCallback, useEffect, useState } from 'react';
import { Cancelled } from '../sim/client';

/** An error's message, whatever was thrown. */
export function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export interface Errors {
  readonly errors: readonly string[];
  /** Adds a message unless the banner already shows it. */
  readonly addError: (m: string) => void;
  readonly clearErrors: () => void;
}

export function useErrors(initial: readonly string[]): Errors {
  const [errors, setErrors] = useState<readonly string[]>(() => [...initial]);
  const addError = useCallback(
    (m: string) => setErrors((prev) => (prev.includes(m) ? prev : [...prev, m])),
    [],
  );
  const clearErrors = useCallback(() => setErrors([]), []);

  // Errors outside React's render (a rejected promise somewhere) still reach the banner.
  useEffect(() => {
    const onRejection = (e: PromiseRejectionEvent) => {
      if (e.reason instanceof Cancelled) return;
      addError(`Unexpected error: ${message(e.reason)}`);
    };
    window.addEventListener('unhandledrejection', onRejection);
    return () => window.removeEventListener('unhandledrejection', onRejection);
  }, [addError]);

  return { errors, addError, clearErrors };
}
