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
      await server.stop();
      await db.drop();
    },
  };
}
