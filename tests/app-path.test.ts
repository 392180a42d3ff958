// Redirects after sign-in (issue 21): `next` is parsed as a URL; only a path of the app is kept.
import { describe, expect, it } from 'vitest';
import { appPath } from '@/lib/http/app-path';

describe('appPath: where sign-in may send the browser', () => {
  it('keeps a dashboard path with its query and fragment, normalized', () => {
    expect(appPath('/queues/orders?page=2#top')).toBe('/queues/orders?page=2#top');
    expect(appPath('/leases')).toBe('/leases');
    expect(appPath('/a/../leases')).toBe('/leases');
    expect(appPath('leases')).toBe('/leases');
    expect(appPath('http:evil.example')).toBe('/evil.example'); // same scheme, no slashes: a relative path, as browsers read it
  });

  it('sends every other form to /: other origins, however spelled, the API, garbage', () => {
    for (const next of [
      '/\t/evil.example/phish',
      '/\n/evil.example/phish',
      '/\r/evil.example/phish', // the report's forms
      '//evil.example/phish',
      '/\\evil.example',
      '\\\\evil.example',
      '/\\/evil.example',
      ' //evil.example',
      'https://evil.example/',
      'javascript:alert(1)',
      'data:text/html,x',
      '/.//evil.example',
      '/%2e//evil.example',
      '//user@evil.example',
      'http://dashboard.invalid@evil.example/',
      '/api/v1/system/maintenance/pop',
      '/_next/static/x.js',
      '',
      undefined,
      ['/a', '/b'],
      42,
    ]) {
      const to = appPath(next);
      expect(to, JSON.stringify(next)).toBe('/');
    }
  });

  it('never answers something a browser would read as another origin', () => {
    for (const next of ['/\t\t//x.example', '/%09/x.example', '/%5C/x.example', '/ /x.example', '/..//x.example']) {
      const to = appPath(next);
      expect(new URL(to, 'http://127.0.0.1:6632').host, `${JSON.stringify(next)} → ${to}`).toBe('127.0.0.1:6632');
    }
  });
});
