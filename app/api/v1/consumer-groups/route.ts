import { listConsumerGroups } from '@/lib/broker/consumer-groups';
import { json, route } from '@/lib/http/route';

export const GET = route(async () => json(await listConsumerGroups()));
