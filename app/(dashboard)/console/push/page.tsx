import { PushView } from '@/components/pages/push-view';

export const metadata = { title: 'Try push' };

export default async function PushPage({ searchParams }: PageProps<'/console/push'>) {
  const { queue, partition } = (await searchParams) as Record<string, string | undefined>;
  return <PushView initial={{ queue, partition }} />;
}
