import { popRoute } from '@/lib/http/pop-route';

export const GET = popRoute(async ({ params }: RouteContext<'/api/v1/pop/queue/[queue]'>) => ({
  queue: (await params).queue,
}));
