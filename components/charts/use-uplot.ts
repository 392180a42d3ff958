'use client';
import { useEffect, useRef, useState } from 'react';
import type uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

/** Whether the system is dark (the dashboard's `dark:` classes follow prefers-color-scheme). */
function usePrefersDark(): boolean {
  const [dark, setDark] = useState(false);
  useEffect(() => {
    const media = window.matchMedia('(prefers-color-scheme: dark)');
    setDark(media.matches);
    const onChange = () => setDark(media.matches);
    media.addEventListener('change', onChange);
    return () => media.removeEventListener('change', onChange);
  }, []);
  return dark;
}

/** Axis and grid colours a canvas cannot take from CSS: readable on the page's light and dark backgrounds. */
export const themeOf = (dark: boolean) =>
  dark ? { text: '#d4d4d8', grid: '#3f3f46' } : { text: '#3f3f46', grid: '#e4e4e7' };

/** Times on the axes in UTC, as everywhere else in the dashboard. */
export const utcDate = (seconds: number) => new Date(new Date(seconds * 1000).toISOString().slice(0, 19));

/**
 * A uPlot chart in the returned element, loaded in the browser only (uPlot needs a canvas, so it
 * never runs at build-time prerender), re-created when the theme or `deps` change, given new
 * data in place, and as wide as its element (the options say the height for a width).
 */
export function useUPlot(
  options: (width: number, dark: boolean) => uPlot.Options,
  data: uPlot.AlignedData,
  deps: unknown[],
) {
  const element = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const latest = useRef(data);
  latest.current = data;
  const dark = usePrefersDark();
  useEffect(() => {
    let cancelled = false;
    let observer: ResizeObserver | undefined;
    void import('uplot').then(({ default: UPlot }) => {
      const el = element.current;
      if (cancelled || !el) return;
      const opts = options(el.clientWidth, dark);
      plot.current = new UPlot(opts, latest.current, el);
      observer = new ResizeObserver(() =>
        plot.current?.setSize({ width: el.clientWidth, height: options(el.clientWidth, dark).height }),
      );
      observer.observe(el);
    });
    return () => {
      cancelled = true;
      observer?.disconnect();
      plot.current?.destroy();
      plot.current = null;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- options is rebuilt every render; deps say when it matters
  }, [dark, ...deps]);
  useEffect(() => {
    plot.current?.setData(data);
  }, [data]);
  return element;
}
