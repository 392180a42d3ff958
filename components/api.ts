'use client';

const OPERATOR_KEY = 'queen.operator';

export function operatorName(): string {
  if (typeof window === 'undefined') return 'dashboard';
  return window.localStorage.getItem(OPERATOR_KEY) || 'dashboard';
}

export function setOperatorName(name: string) {
  window.localStorage.setItem(OPERATOR_KEY, name);
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** the error's whole answer (a 409 may say what holds the object now) */
    readonly body: Record<string, unknown> | null = null,
  ) {
    super(message);
  }
}

/** JSON in, JSON out; operator actions carry who did them, for the audit log. */
export async function api<T = any>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  const res = await fetch(path, {
    method,
    signal,
    headers: { 'content-type': 'application/json', 'x-queen-actor': operatorName() },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const parsed = text ? JSON.parse(text) : null;
  if (!res.ok) throw new ApiError(res.status, parsed?.error ?? `${res.status} ${res.statusText}`, parsed);
  return parsed as T;
}
