'use client';
import { useEffect } from 'react';

/** Marks the page interactive once React has hydrated it; the e2e tests wait for the mark. */
export function HydrationMark() {
  useEffect(() => {
    document.documentElement.dataset.hydrated = 'true';
  }, []);
  return null;
}
