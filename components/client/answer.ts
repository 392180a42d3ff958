// What a route answers, as the route table's schema says (lib/http/route-table.ts): the client
// modules of this folder type their replies with it instead of declaring the shapes again.
import type { z } from 'zod';
import type { ROUTES } from '@/lib/http/route-table';

type Routes = typeof ROUTES;

/** The output type of `ROUTES[route].schemas[status]` (200 unless said). */
export type Answer<
  K extends keyof Routes,
  S extends keyof Routes[K]['schemas'] = 200 & keyof Routes[K]['schemas'],
> = Routes[K]['schemas'][S] extends z.ZodType ? z.output<Routes[K]['schemas'][S]> : never;

/** A path segment, encoded. */
export const seg = (value: string) => encodeURIComponent(value);
