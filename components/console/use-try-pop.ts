'use client';
import { useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { extendLease, releaseLease } from '../client/leases';
import { ackBatch, type PopTarget, popPreviewPath, popRoutePath, popTarget } from '../client/pop';
import { searchQueues } from '../client/search';
import { useDenied } from '../session';
import { useUrlState } from '../url-state';
import type { ConsoleParam, PopParamName, PopRoute } from '@/lib/broker/pop-params';

/** The pop's query parameters, from their one description (lib/broker/pop-params.ts), as the page hands them over. */
export type Params = ConsoleParam[];

/** Every field of the form: the route and what it names, then the pop's query parameters. */
export type Form = Record<'route' | 'queue' | 'partition' | PopParamName, string>;

/** The route the form names (an unknown one in the page's URL is the queue route, as its path says). */
export const routeOf = (f: Form): PopRoute => (f.route === 'partition' || f.route === 'discovery' ? f.route : 'queue');

/** Whether the form's route reads this parameter (the others are neither shown nor sent). */
export const routeReads = (param: ConsoleParam, f: Form) => param.routes?.includes(routeOf(f)) ?? true;

const defaultsOf = (params: Params) =>
  ({
    route: 'queue',
    queue: '',
    partition: '',
    ...Object.fromEntries(params.map((p) => [p.name, p.field?.initial ?? ''])),
  }) as Form;

export function popUrl(f: Form, params: Params): string {
  const qs = new URLSearchParams();
  for (const p of params) if (f[p.name] !== '' && routeReads(p, f)) qs.set(p.name, f[p.name]);
  const path = popRoutePath(f.route, f.queue, f.partition);
  return `${path}${qs.size ? `?${qs}` : ''}`;
}

/** The dry run of the same pop: GET /api/dashboard/pop-preview with the pop's parameters and its queue and partition. */
function dryRunUrl(f: Form, popPath: string): string {
  const qs = new URLSearchParams(popPath.includes('?') ? popPath.slice(popPath.indexOf('?') + 1) : '');
  if (f.route !== 'discovery') qs.set('queue', f.queue);
  if (f.route === 'partition') qs.set('partition', f.partition);
  return popPreviewPath(qs);
}

export interface Reply {
  kind: 'pop' | 'dry run';
  /** a dry run's 204: more than its empty word (a misspelt queue behind an idle, the leases behind a leased) */
  why?: {
    /** `leased`, or a name of IDLE_BECAUSE (lib/broker/empty-reasons.ts) */
    reason?: string;
    text: string;
    group?: string;
    held?: number;
    leases?: { partition: string; holder: string | null; expiresAt: string; leaseId: string }[];
  } | null;
  status: number;
  headers: [string, string][];
  body: any;
  text: string;
  ms: number;
}

/**
 * The Try-pop page's state and what it does: the form (kept in the URL once run), the pop and
 * its dry run, the warning before a pop that would create a queue or a group, and the actions on
 * the lease a pop took (ack or fail all, extend, release).
 */
export function useTryPop(initial: Partial<Form>, params: Params) {
  const { set } = useUrlState();
  const defaults = defaultsOf(params);
  const [form, setForm] = useState<Form>({ ...defaults, ...initial });
  const [reply, setReply] = useState<Reply | null>(null);
  const [busy, setBusy] = useState(false);
  const [action, setAction] = useState<{ label: string; result: unknown } | null>(null);
  const [failError, setFailError] = useState('processing failed');
  const [extendBy, setExtendBy] = useState('60');
  const [releaseReason, setReleaseReason] = useState('');
  const url = popUrl(form, params);
  const previewUrl = dryRunUrl(form, url);
  const writeDenied = useDenied('read-write');
  const adminDenied = useDenied('admin');
  // Known only in the browser; the server's render and the first client render leave it empty.
  const [origin, setOrigin] = useState('');
  useEffect(() => setOrigin(window.location.origin), []);
  const [creates, setCreates] = useState<PopTarget | null>(null);
  const suggestions = useQuery({
    queryKey: ['queue-suggestions', form.queue],
    queryFn: ({ signal }) => searchQueues(form.queue, signal),
    enabled: form.route !== 'discovery',
    staleTime: 10_000,
  });
  const field = (k: keyof Form) => ({
    value: form[k],
    onChange: (e: { target: { value: string } }) => setForm({ ...form, [k]: e.target.value }),
  });

  /** A pop that would create the queue or the group waits for "create and pop"; a dry run creates nothing and only warns. */
  async function attempt(kind: Reply['kind']) {
    let target: PopTarget | null = null;
    if (form.route !== 'discovery') {
      const t = await popTarget(form.queue, form.consumerGroup);
      if (!t.queueExists || (form.consumerGroup && !t.groupExists)) target = t;
    }
    setCreates(target);
    if (kind === 'pop' && target) {
      setReply(null);
      return;
    }
    await run(kind);
  }

  async function run(kind: Reply['kind']) {
    setBusy(true);
    setAction(null);
    set(
      Object.fromEntries(
        Object.entries(defaults).map(([k, v]) => [k, form[k as keyof Form] === v ? null : form[k as keyof Form]]),
      ),
    );
    const started = performance.now();
    try {
      if (kind === 'pop') {
        const res = await fetch(url, {
          headers: { 'content-type': 'application/json', 'x-queen-consumer': 'dashboard console' },
        });
        const text = await res.text();
        setReply({
          kind,
          status: res.status,
          headers: [...res.headers.entries()],
          body: text ? JSON.parse(text) : null,
          text,
          ms: performance.now() - started,
        });
      } else {
        const preview = await fetch(previewUrl);
        const data = await preview.json();
        const status = preview.ok ? data.status : preview.status;
        const body = preview.ok ? data.body : data;
        setReply({
          kind,
          status,
          headers: data.empty ? [['x-queen-empty', data.empty]] : [],
          body,
          text: body ? JSON.stringify(body) : '',
          ms: performance.now() - started,
          why: data.why ?? null,
        });
      }
    } finally {
      setBusy(false);
    }
  }

  /** The pop's lease, when it took one. */
  const leased = reply?.kind === 'pop' && reply.status === 200 && reply.body?.leaseId ? reply.body : null;
  const perform = async (label: string, call: () => Promise<unknown>) => {
    try {
      setAction({ label, result: await call() });
    } catch (err) {
      setAction({ label, result: { error: (err as Error).message } });
    }
  };
  const ackAll = (status: 'completed' | 'failed') =>
    perform(status === 'completed' ? 'Ack all' : 'Fail all', () =>
      ackBatch({
        consumerGroup: leased.consumerGroup,
        acknowledgments: leased.messages.map((m: any) => ({
          transactionId: m.transactionId,
          partitionId: m.partitionId,
          leaseId: m.leaseId,
          status,
          error: status === 'failed' ? failError : null,
        })),
      }),
    );
  const extend = () => perform('Extend', () => extendLease(leased.leaseId, Number(extendBy)));
  const release = () => perform('Release', () => releaseLease(leased.leaseId, releaseReason));

  return {
    params,
    form,
    field,
    url,
    previewUrl,
    origin,
    suggestions: suggestions.data?.matches ?? [],
    busy,
    writeDenied,
    adminDenied,
    attempt,
    creates,
    /** "create and pop": the pop the warning held back */
    createAndPop: () => {
      setCreates(null);
      void run('pop');
    },
    cancelCreate: () => setCreates(null),
    reply,
    leased,
    action,
    lease: { failError, setFailError, extendBy, setExtendBy, releaseReason, setReleaseReason, ackAll, extend, release },
  };
}

export type TryPop = ReturnType<typeof useTryPop>;
