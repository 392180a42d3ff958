import { maintenanceState } from '@/lib/dashboard/overview';
import { json, route } from '@/lib/http/route';

export const GET = route(async () => json(await maintenanceState()));
