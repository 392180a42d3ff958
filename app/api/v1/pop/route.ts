import { popRoute } from '@/lib/broker/pop-route';

export const GET = popRoute(async () => ({}));
