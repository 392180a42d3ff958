import { connection } from 'next/server';
import { OverviewView } from '@/components/pages/overview-view';
import { overview } from '@/lib/dashboard/overview';

export const metadata = { title: 'Overview' };

export default async function OverviewPage() {
  await connection();
  return <OverviewView initial={await overview()} />;
}
