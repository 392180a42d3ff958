/** @type {import('next').NextConfig} */
module.exports = {
  poweredByHeader: false,
  // The broker's own JSON routes answer bare 204s and exact bodies; no trailing-slash redirects.
  skipTrailingSlashRedirect: true,
};
