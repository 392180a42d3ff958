import { buildIfStale } from '../../scripts/lib/build.mjs';

export default function setup() {
  if (!process.env.TEST_ADMIN_DATABASE_URL) {
    throw new Error(
      'TEST_ADMIN_DATABASE_URL is not set: run the tests with `npm test` (or `npm test -- --unit <files>`), which provides a PostgreSQL.',
    );
  }
  buildIfStale();
}
