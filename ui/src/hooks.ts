// Small hooks shared by the pages.
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";

import { ApiError, messageOf } from "./api";

export interface Resource<T> {
  data: T | null;
  error: string | null;
  /** The failure behind `error`, for pages that react to its status. */
  failure: unknown;
  loading: boolean;
  reload: () => Promise<void>;
  setData: (data: T) => void;
}

/** Loads data on mount and on `reload()`; keeps the last data while reloading. An answer older
 * than the one shown is dropped: a call made before a filter changed (or a periodic reload still
 * out) that arrives last would otherwise show data the page no longer asks for. */
export function useResource<T>(load: () => Promise<T>): Resource<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [failure, setFailure] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);
  const alive = useRef(true);
  // Calls are numbered; `shown` is the number of the call whose answer (or failure) is shown.
  const calls = useRef(0);
  const shown = useRef(0);
  const loader = useRef(load);
  loader.current = load;

  const reload = useCallback(async () => {
    const call = ++calls.current;
    const newest = () => {
      if (!alive.current || call < shown.current) return false;
      shown.current = call;
      return true;
    };
    setLoading(true);
    try {
      const value = await loader.current();
      if (!newest()) return;
      setData(value);
      setError(null);
      setFailure(null);
    } catch (failed) {
      if (failed instanceof ApiError && failed.status === 401) return;
      if (!newest()) return;
      setError(messageOf(failed));
      setFailure(failed);
    } finally {
      if (alive.current && call === calls.current) setLoading(false);
    }
  }, []);

  // A layout effect starts the request right after the first render, not a frame later.
  useLayoutEffect(() => {
    alive.current = true;
    void reload();
    return () => {
      alive.current = false;
    };
  }, [reload]);

  return { data, error, failure, loading, reload, setData };
}

/** Sets the document title while the page is shown. */
export function usePageTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · Sightline`;
  }, [title]);
}

/** Seconds left of a wait that started with `start(seconds)`; 0 when over. */
export function useCountdown(): [number, (seconds: number) => void] {
  const [left, setLeft] = useState(0);
  const until = useRef(0);
  const active = left > 0;
  useEffect(() => {
    if (!active) return undefined;
    const timer = window.setInterval(() => {
      setLeft(Math.max(0, Math.ceil((until.current - Date.now()) / 1000)));
    }, 250);
    return () => window.clearInterval(timer);
  }, [active]);
  const start = useCallback((seconds: number) => {
    until.current = Date.now() + seconds * 1000;
    setLeft(seconds);
  }, []);
  return [left, start];
}

/** Re-renders every `ms` milliseconds, for relative times such as "2 minutes ago". */
export function useTicker(ms: number): void {
  const [, setTick] = useState(0);
  useEffect(() => {
    const timer = window.setInterval(() => setTick((t) => t + 1), ms);
    return () => window.clearInterval(timer);
  }, [ms]);
}

/** Calls `reload` every `ms` milliseconds while the tab is visible, and when it becomes visible. */
export function useAutoRefresh(reload: () => Promise<void>, ms: number): void {
  useEffect(() => {
    const visible = () => document.visibilityState === "visible";
    const timer = window.setInterval(() => {
      if (visible()) void reload();
    }, ms);
    const onVisible = () => {
      if (visible()) void reload();
    };
    document.addEventListener("visibilitychange", onVisible);
    return () => {
      window.clearInterval(timer);
      document.removeEventListener("visibilitychange", onVisible);
    };
  }, [reload, ms]);
}
