import { connection } from 'next/server';
import { SystemView } from '@/components/pages/system-view';
import { systemFacts } from '@/lib/dashboard/system';

export const metadata = { title: 'System' };

export default async function SystemPage() {
  await connection();
  return <SystemView initial={await systemFacts()} />;
}
