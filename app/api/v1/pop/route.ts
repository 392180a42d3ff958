import { popRoute } from '@/lib/http/pop-route';

export const GET = popRoute(async () => ({}));
