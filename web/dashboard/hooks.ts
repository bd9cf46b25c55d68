import { useCallback, useEffect, useRef, useState } from 'react';
import { get, shopPath } from './api';
import { useShop } from './context';

export interface Loaded<T> {
  data: T | null;
  error: Error | null;
  loading: boolean;
  /** Loads again with the same inputs (after a change, or from a "Try again" button). */
  reload: () => void;
}

/**
 * Runs `load` whenever `deps` change and keeps the latest answer. An answer to an older request
 * is dropped, so a quick change of range or page never shows stale numbers.
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | null; error: Error | null; loading: boolean }>({
    data: null,
    error: null,
    loading: true,
  });
  const [tick, setTick] = useState(0);
  const latest = useRef(0);
  const loadRef = useRef(load);
  loadRef.current = load;

  useEffect(() => {
    const id = ++latest.current;
    setState((s) => ({ ...s, loading: true, error: null }));
    loadRef.current().then(
      (data) => id === latest.current && setState({ data, error: null, loading: false }),
      (error: unknown) =>
        id === latest.current && setState({ data: null, error: error instanceof Error ? error : new Error(String(error)), loading: false }),
    );
    // The inputs are the caller's, checked at each call of `useLoad` (the lint knows it as an
    // effect hook); `load` itself is read through a ref, so a new closure each render is no change.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick]);

  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

/**
 * Reads one of the shop's resources, `shopPath(domain, ...parts)`; nothing (null data) while
 * `parts` is null, as for a form that creates rather than edits.
 */
export function useShopData<T>(parts: string[] | null): Loaded<T> {
  const { domain } = useShop();
  const path = parts && shopPath(domain, ...parts);
  return useLoad(() => (path ? get<T>(path) : Promise.resolve(null as T)), [path]);
}
