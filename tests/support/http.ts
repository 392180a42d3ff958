/** A tiny client for the broker's HTTP API: JSON in, status + parsed body + raw text out. */
export interface Reply<T = any> {
  status: number;
  headers: Headers;
  text: string;
  body: T;
}

export function client(baseUrl: string) {
  async function request<T = any>(
    method: string,
    path: string,
    body?: unknown,
    init: RequestInit = {},
  ): Promise<Reply<T>> {
    const res = await fetch(baseUrl + path, {
      method,
      headers: { 'content-type': 'application/json', ...(init.headers ?? {}) },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      signal: init.signal,
    });
    const text = await res.text();
    let parsed: any;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, text, body: parsed };
  }
  return {
    request,
    get: <T = any>(path: string, init?: RequestInit) => request<T>('GET', path, undefined, init),
    post: <T = any>(path: string, body?: unknown, init?: RequestInit) => request<T>('POST', path, body, init),
    del: <T = any>(path: string, init?: RequestInit) => request<T>('DELETE', path, undefined, init),
    push: (items: unknown[]) => request('POST', '/api/v1/push', { items }),
  };
}
