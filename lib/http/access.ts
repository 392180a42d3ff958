// Roles and levels: who may call what is each route's `access` in the route table
// (lib/http/route-table.ts); this module stays free of server code, for the client components.

export const ROLES = ['read-only', 'read-write', 'admin'] as const;
export type Role = (typeof ROLES)[number];
export type Level = 'public' | Role;

/** Whether a holder of `role` (none when signed out) may do what needs `level`. */
export function allows(role: Role | undefined, level: Level): boolean {
  if (level === 'public') return true;
  return role !== undefined && ROLES.indexOf(role) >= ROLES.indexOf(level);
}
