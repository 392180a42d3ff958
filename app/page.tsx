import { connection } from 'next/server';
import { listQueues } from '@/lib/broker/queues';

export default async function Home() {
  await connection();
  const queues = await listQueues();
  return (
    <main className="mx-auto max-w-5xl p-6">
      <h1 className="text-2xl font-semibold">Queues</h1>
      {queues.length === 0 ? (
        <p className="mt-4 text-zinc-500">No queues yet. Push a message or configure a queue to create one.</p>
      ) : (
        <table className="mt-4 w-full text-left text-sm">
          <thead className="text-zinc-500">
            <tr><th className="py-1">Queue</th><th>Partitions</th><th>Messages</th><th>Pending</th><th>Processing</th></tr>
          </thead>
          <tbody>
            {queues.map((q) => (
              <tr key={q.id} className="border-t border-zinc-200 dark:border-zinc-800">
                <td className="py-1 font-mono">{q.name}</td>
                <td>{q.partitions}</td>
                <td>{q.messages.total}</td>
                <td>{q.messages.pending}</td>
                <td>{q.messages.processing}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </main>
  );
}
