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
  async headers() {
    return [{ source: '/:path*', headers: SECURITY_HEADERS }];
  },
};
