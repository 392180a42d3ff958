import { testDatabase, type TestDatabase } from './db';
import { client } from './http';
import { startServer, type TestServer } from './server';

export interface TestApp {
  db: TestDatabase;
  server: TestServer;
  api: ReturnType<typeof client>;
  stop: () => Promise<void>;
}

/** A fresh database and the real app serving it over HTTP. */
export async function startApp(env: Record<string, string> = {}): Promise<TestApp> {
  const db = await testDatabase();
  const server = await startServer(db.url, env);
  return {
    db,
    server,
    api: client(server.url),
    stop: async () => {
      const started = Date.now();
      await server.stop();
      const stopped = Date.now();
      await db.drop();
      // a slow teardown names its slow step: it has cost CI runs before
      if (Date.now() - started > 15_000)
        console.warn(
          `[test] teardown of ${db.name}: server stop ${stopped - started} ms, drop ${Date.now() - stopped} ms`,
        );
    },
  };
}
