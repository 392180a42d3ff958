// What the model checker (tests/support/model-run.ts) records while it runs: every request with the
// client's time before it was sent and after its answer came back, and what the database held at
// each look. The checks (model-check.ts) judge this log afterwards, so an interleaving that the
// timings leave open is never called a failure: a finding is something no order of the requests
// inside their time spans explains.

export interface QueueSpec {
  name: string;
  options: Record<string, unknown>;
  partitions: string[];
  /** seconds after which any message may go (retentionSeconds), else null */
  retention: number | null;
  /** seconds after which a message some group has not committed may go (maxWaitTimeSeconds) */
  maxWait: number | null;
  /** seconds after which a message every group has committed may go (completedRetentionSeconds, else ttl) */
  done: number | null;
  retryLimit: number;
}

export interface PushItemRec {
  tx: string;
  partition: string;
  /** the payload as the push body carried it, raw JSON text (numbers JavaScript cannot hold included) */
  payload: string;
  retry: boolean;
  status?: string;
  id?: string;
  partitionId?: string;
}
export interface PushRec {
  kind: 'push';
  queue: string;
  /** which app instance answered (0: the first, 1: the second on the same database) */
  instance: number;
  start: number;
  end: number;
  httpStatus: number;
  items: PushItemRec[];
}

export interface Delivered {
  id: string;
  tx: string;
  partitionId: string;
  createdAt: string;
  /** the message's `data` as the response text carried it (never through JSON.parse) */
  data: string;
}
export interface PopRec {
  kind: 'pop';
  seq: number;
  queue: string;
  group: string;
  actor: string;
  start: number;
  end: number;
  status: number;
  leaseId: string;
  leaseSeconds: number;
  messages: Delivered[];
  instance: number;
  autoAck: boolean;
  /** a long poll's timeout (wait=true), in ms */
  waitMs?: number;
}

export interface AckItemRec {
  id: string;
  tx: string;
  partitionId: string;
  leaseId: string;
  status: 'completed' | 'failed';
  success?: boolean;
  error?: string | null;
  released?: boolean;
  dlq?: boolean;
}
export interface AckRec {
  kind: 'ack';
  group: string;
  actor: string;
  start: number;
  end: number;
  httpStatus: number;
  items: AckItemRec[];
}

export interface SeekRec {
  kind: 'seek';
  queue: string;
  group: string;
  /** a partition's name for a one-partition seek */
  partition?: string;
  toEnd: boolean;
  timestamp?: string;
  start: number;
  end: number;
  httpStatus: number;
}

export interface DeleteRec {
  kind: 'delete';
  id: string;
  tx: string;
  partitionId: string;
  start: number;
  end: number;
  httpStatus: number;
}

export interface ExtendRec {
  kind: 'extend';
  leaseId: string;
  seconds: number;
  start: number;
  end: number;
  httpStatus: number;
  success: boolean;
}

/** An operator's requeue of one dead letter: a copy of the message is pushed under a new id. */
export interface RequeueRec {
  kind: 'requeue';
  queue: string;
  partitionId: string;
  group: string;
  tx: string;
  offset: number;
  start: number;
  end: number;
  httpStatus: number;
  success: boolean;
  newTx?: string;
  newId?: string;
  newOffset?: number | null;
  /** the other groups the copy counts as done for: they never receive it */
  doneFor?: string[];
}

/** An operator's forced release of a lease (every partition it holds). */
export interface ReleaseRec {
  kind: 'release';
  leaseId: string;
  start: number;
  end: number;
  httpStatus: number;
}

/** An operator's deletion of a group from a queue (its cursors, counters, dead letters, subscription); its consumers' next pop joins it again. */
export interface DropRec {
  kind: 'drop';
  queue: string;
  group: string;
  start: number;
  end: number;
  httpStatus: number;
}

export interface PauseRec {
  kind: 'pause';
  partitionId: string;
  group: string;
  paused: boolean;
  until: string | null;
  start: number;
  end: number;
  httpStatus: number;
}

/** A group's first contact with a queue: its first pop, with the subscription it asked for. */
export interface JoinRec {
  kind: 'join';
  queue: string;
  group: string;
  mode: 'all' | 'new' | 'from';
  from?: string;
  start: number;
  end: number;
}

export type ModelEvent =
  | PushRec
  | PopRec
  | AckRec
  | SeekRec
  | DeleteRec
  | PauseRec
  | JoinRec
  | ExtendRec
  | RequeueRec
  | ReleaseRec
  | DropRec;

/** One message as the database showed it: first and last look that found it, first look that did not. */
export interface Observed {
  id: string;
  partitionId: string;
  offset: number;
  tx: string;
  createdAt: string;
  createdMs: number;
  firstSeen: number;
  lastSeen: number;
  goneSeen?: number;
}

/** A look that found a message older than its queue's bound, outside every live lease. */
export interface OverAge {
  id: string;
  queue: string;
  offset: number;
  partitionId: string;
  ageSeconds: number;
  boundSeconds: number;
  at: number;
  outsideSeconds: number;
}

export interface PartitionInfo {
  id: string;
  queue: string;
  name: string;
}

export interface Violation {
  kind: string;
  detail: string;
}

/** Server timestamps carry microseconds: kept as a millisecond float, so that ordering inside a millisecond survives. */
export function isoMs(iso: string): number {
  const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?Z$/.exec(iso);
  if (!m) return Date.parse(iso);
  const whole = Date.parse(`${m[1]}Z`);
  const frac = m[2] ? Number(`0.${m[2]}`) * 1000 : 0;
  return whole + frac;
}

/** The client's clock, in milliseconds with a fraction, on the same epoch as Date.now() and the server's now(). */
export const clock = () => performance.timeOrigin + performance.now();

/**
 * The raw text of every message's `data` in a pop's answer, read from the response text: a small
 * scanner of JSON value boundaries, so that numbers come back exactly as the broker wrote them.
 */
export function rawMessageData(text: string): string[] {
  const top = rawMembers(text, skipWs(text, 0));
  const messages = top.get('messages');
  if (!messages) return [];
  return rawElements(text, messages[0]).map(([a]) => {
    const span = rawMembers(text, a).get('data');
    return span ? text.slice(span[0], span[1]) : '';
  });
}

/** `data` of every dead letter of a GET /api/v1/dlq answer, raw. */
export function rawDeadLetterData(text: string): string[] {
  return rawMessageData(text);
}

const WS = ' \t\n\r';
function skipWs(s: string, i: number) {
  while (i < s.length && WS.includes(s[i])) i++;
  return i;
}
/** The index just past the JSON value that starts at i. */
function valueEnd(s: string, i: number): number {
  const c = s[i];
  if (c === '"') {
    i++;
    while (i < s.length && s[i] !== '"') i += s[i] === '\\' ? 2 : 1;
    return i + 1;
  }
  if (c === '{' || c === '[') {
    let depth = 0;
    for (; i < s.length; i++) {
      const ch = s[i];
      if (ch === '"') i = valueEnd(s, i) - 1;
      else if (ch === '{' || ch === '[') depth++;
      else if (ch === '}' || ch === ']') {
        depth--;
        if (depth === 0) return i + 1;
      }
    }
    throw new Error('unterminated JSON value');
  }
  while (i < s.length && !',}]'.includes(s[i]) && !WS.includes(s[i])) i++;
  return i;
}
/** The members of the object at i: key -> [start, end) of its value. */
function rawMembers(s: string, i: number): Map<string, [number, number]> {
  const out = new Map<string, [number, number]>();
  if (s[i] !== '{') return out;
  i = skipWs(s, i + 1);
  while (i < s.length && s[i] !== '}') {
    const keyEnd = valueEnd(s, i);
    const key = JSON.parse(s.slice(i, keyEnd)) as string;
    i = skipWs(s, keyEnd);
    i = skipWs(s, i + 1); // the colon
    const end = valueEnd(s, i);
    out.set(key, [i, end]);
    i = skipWs(s, end);
    if (s[i] === ',') i = skipWs(s, i + 1);
  }
  return out;
}
/** The elements of the array at i, as [start, end). */
function rawElements(s: string, i: number): [number, number][] {
  const out: [number, number][] = [];
  if (s[i] !== '[') return out;
  i = skipWs(s, i + 1);
  while (i < s.length && s[i] !== ']') {
    const end = valueEnd(s, i);
    out.push([i, end]);
    i = skipWs(s, end);
    if (s[i] === ',') i = skipWs(s, i + 1);
  }
  return out;
}
