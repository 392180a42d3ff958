import { popRoute } from '@/lib/http/pop-route';

export const GET = popRoute(async ({ params }: RouteContext<'/api/v1/pop/queue/[queue]/partition/[partition]'>) => {
  const { queue, partition } = await params;
  return { queue, partition };
});
