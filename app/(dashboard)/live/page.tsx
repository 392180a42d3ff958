import { LiveView } from '@/components/pages/live-view';

export const metadata = { title: 'Live' };

export default async function LivePage({ searchParams }: PageProps<'/live'>) {
  const search = (await searchParams) as Record<string, string | undefined>;
  return (
    <LiveView
      filters={{
        queue: search.queue || undefined,
        group: search.group || undefined,
        type: search.type || undefined,
        holder: search.holder || undefined,
      }}
    />
  );
}
