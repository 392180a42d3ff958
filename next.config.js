/** Sent with everything Next.js serves; scripts/serve.mjs adds the same to the API's answers. */
const SECURITY_HEADERS = [
  { key: 'X-Content-Type-Options', value: 'nosniff' },
  { key: 'Referrer-Policy', value: 'same-origin' },
  { key: 'X-Frame-Options', value: 'DENY' },
];

/** @type {import('next').NextConfig} */
module.exports = {
  poweredByHeader: false,
  // The broker's own JSON routes answer bare 204s and exact bodies; no trailing-slash redirects.
  skipTrailingSlashRedirect: true,
  // A page's modules load at its first request, not at boot: the broker's routes (loaded at boot by
  // scripts/serve.mjs) are what a restarted instance is asked first, and loading every dashboard
  // page took ~0.15 s of the CPU a rolling restart takes from the instances serving (docs/performance.md).
  experimental: { preloadEntriesOnStart: false },
  // One zod in the process: scripts/serve.mjs imports it (lib/config.mjs) before any route, and a
  // bundled copy made the boot run zod's module code a second time (docs/performance.md).
  serverExternalPackages: ['zod'],
  async headers() {
    return [{ source: '/:path*', headers: SECURITY_HEADERS }];
  },
};
