// The invariants the model checker holds the broker to (issue 17), judged after the run from what
// model-run.ts recorded. Every request is known only by its time span, a message's removal only
// between the last look that found it and the first that did not; a check reports only what no
// order inside those spans explains. The removal rules are the documented ones:
// - an operator's DELETE removes its message at once (for every group);
// - retentionSeconds removes any message older than it;
// - maxWaitTimeSeconds removes a message older than it that some group has not committed (evicted for that group);
// - completedRetentionSeconds (else ttl) removes a message older than it that every group has committed;
// - dead letters stay, with their payload, until DEAD_LETTER_RETENTION_DAYS;
// - nothing inside a live lease's span is removed (an operator's delete aside);
// - a group whose cursor lands below removed offsets passes over them.
// And (issue 30): a message an autoAck long poll's claim took reaches that client, whatever its
// deadline did meanwhile; every delivery's `data` is PostgreSQL's jsonb text of the payload pushed
// (numbers as written); the Prometheus counters agree with what the clients saw.
import type {
  AckRec,
  DeleteRec,
  DropRec,
  ExtendRec,
  JoinRec,
  ReleaseRec,
  RequeueRec,
  ModelEvent,
  OverAge,
  Observed,
  PartitionInfo,
  PauseRec,
  PopRec,
  PushRec,
  QueueSpec,
  SeekRec,
  Violation,
} from './model-events';
import { isoMs } from './model-events';

export interface EndState {
  cursors: {
    partitionId: string;
    group: string;
    queue: string;
    committed: number;
    head: number;
    evicted: number;
    leased: boolean;
    storedAbove: number;
    /** offsets done above `committed` */
    acked: number[];
  }[];
  lags: { queue: string; group: string; lag: number }[];
  /** `data` as the listing's text carried it */
  deadLetters: { queue: string; group: string; partitionId: string; tx: string; data: string }[];
  counters: { name: string; key: string; counted: number; actual: number; error?: string }[];
  /** /metrics/prometheus of each instance: the message counters per (queue, group) */
  metrics: { instance: number; queue: string; group: string; delivered?: number; acked?: number; error?: string }[];
}

export interface ModelRecord {
  events: ModelEvent[];
  observed: Map<string, Observed>;
  partitions: Map<string, PartitionInfo>;
  specs: QueueSpec[];
  /** queues only autoAck pops and the drain consume, with no operator: every message reaches exactly one client per group */
  autoAckQueues: string[];
  /** payload text pushed -> PostgreSQL's jsonb text of it */
  jsonb: Map<string, string>;
  groups: { queue: string; group: string }[];
  end: EndState;
  drained: boolean;
  doubleLeases: string[];
  overAged: OverAge[];
}

interface Msg {
  id: string;
  queue: string;
  partition: string;
  partitionId: string;
  tx: string;
  /** the payload text pushed (a requeued copy: its original's) */
  payload: string;
  pushStart: number;
  pushEnd: number;
  obs?: Observed;
  createdMs?: number;
  /** a requeued copy: the groups it was counted done for (they never receive it) */
  doneFor?: string[];
}

/** What happened to one message in one group, in the terms the checks need. */
interface Line {
  needs: { t: number; why: string }[];
  clears: { a: number; b: number }[];
  deliveries: PopRec[];
  acks: { as: number; ae: number; success: boolean; status: string; dlq: boolean; leaseId: string }[];
}

const SLACK = 5; // ms: float rounding of microsecond timestamps

export function checkModel(rec: ModelRecord): Violation[] {
  const out: Violation[] = [];
  const add = (kind: string, detail: string) => out.push({ kind, detail });
  const specOf = new Map(rec.specs.map((s) => [s.name, s]));
  const partName = (id: string) => rec.partitions.get(id)?.name ?? id;
  const t0 = Math.min(...rec.events.map((e) => e.start));
  const rel = (t: number | undefined) => (t === undefined ? '-' : `${((t - t0) / 1000).toFixed(3)}s`);

  // ---- messages --------------------------------------------------------------------------
  const msgs = new Map<string, Msg>();
  const pushes = rec.events.filter((e): e is PushRec => e.kind === 'push');
  for (const p of pushes) {
    for (const i of p.items) {
      if (i.status !== 'queued' || !i.id || msgs.has(i.id)) continue;
      msgs.set(i.id, {
        id: i.id,
        queue: p.queue,
        partition: i.partition,
        partitionId: i.partitionId!,
        tx: i.tx,
        payload: i.payload,
        pushStart: p.start,
        pushEnd: p.end,
      });
    }
  }
  const requeues = rec.events.filter((e): e is RequeueRec => e.kind === 'requeue' && e.httpStatus === 200 && e.success);
  for (const q of requeues) {
    const partition = rec.partitions.get(q.partitionId)?.name ?? '?';
    if (!q.newId || q.newOffset === null || q.newOffset === undefined) {
      add(
        'requeue pushed no copy',
        `${q.group}: ${q.queue}/${partition} offset ${q.offset} tx ${q.tx} at ${rel(q.start)}: answered success with ${JSON.stringify({ newTransactionId: q.newTx, newMessageId: q.newId, newOffset: q.newOffset })}`,
      );
      continue;
    }
    // the copy is a new message like any pushed one, with its original's payload
    const original = [...msgs.values()].find((m) => m.partitionId === q.partitionId && m.tx === q.tx);
    if (!msgs.has(q.newId) && original)
      msgs.set(q.newId, {
        id: q.newId,
        queue: q.queue,
        partition,
        partitionId: q.partitionId,
        tx: q.newTx!,
        payload: original.payload,
        pushStart: q.start,
        pushEnd: q.end,
        doneFor: q.doneFor,
      });
  }
  for (const o of rec.observed.values()) {
    const m = msgs.get(o.id);
    if (m) {
      m.obs = o;
      m.createdMs = o.createdMs;
    }
  }
  const pops = rec.events.filter((e): e is PopRec => e.kind === 'pop');
  for (const p of pops)
    for (const d of p.messages) {
      const m = msgs.get(d.id);
      if (m && m.createdMs === undefined) m.createdMs = isoMs(d.createdAt);
    }
  const byQueue = new Map<string, Msg[]>();
  for (const m of msgs.values()) byQueue.set(m.queue, [...(byQueue.get(m.queue) ?? []), m]);
  const deletes = rec.events.filter((e): e is DeleteRec => e.kind === 'delete' && e.httpStatus === 200);
  const deletedAt = new Map<string, DeleteRec>();
  for (const d of deletes) if (!deletedAt.has(d.id)) deletedAt.set(d.id, d);
  const describe = (m: Msg) =>
    `${m.queue}/${m.partition} offset ${m.obs?.offset ?? '?'} tx ${m.tx} (created ${rel(m.createdMs)}, pushed ${rel(m.pushStart)}, ` +
    `seen ${rel(m.obs?.firstSeen)}..${rel(m.obs?.lastSeen)}, gone by ${rel(m.obs?.goneSeen)}${deletedAt.has(m.id) ? ', deleted by the operator' : ''})`;

  // ---- joins -----------------------------------------------------------------------------
  const joins = new Map<string, { start: number; end: number; mode: string; from?: string }>();
  const key = (queue: string, group: string) => `${queue}\u0000${group}`;
  for (const e of rec.events) {
    if (e.kind === 'join') joins.set(key(e.queue, e.group), { start: e.start, end: e.end, mode: e.mode, from: e.from });
  }
  for (const p of pops) {
    const k = key(p.queue, p.group);
    if (!joins.has(k)) joins.set(k, { start: p.start, end: p.end, mode: 'all' });
  }
  // A deleted group is joined again by the first pop that ends after the deletion (one begun
  // before may already have joined it: its start is taken, which only weakens the checks).
  const drops = rec.events
    .filter((e): e is DropRec => e.kind === 'drop' && e.httpStatus === 200)
    .sort((a, b) => a.start - b.start);
  const epochs = new Map<
    string,
    { join: { start: number; end: number; mode: string; from?: string }; drop?: DropRec }[]
  >();
  for (const [k, j] of joins) epochs.set(k, [{ join: j }]);
  for (const d of drops) {
    const list = epochs.get(key(d.queue, d.group));
    if (!list) continue;
    const current = list[list.length - 1];
    if (current.drop) continue; // a second deletion before any pop joined it again
    current.drop = d;
    const again = pops
      .filter((p) => p.queue === d.queue && p.group === d.group && p.end > d.end)
      .sort((a, b) => a.end - b.end)[0];
    if (again) list.push({ join: { start: again.start, end: again.end, mode: 'all' } });
  }
  /** Whether the group surely existed on the queue from t1 to t2 (joined before, not deleted until after). */
  const existed = (queue: string, group: string, t1: number, t2: number) =>
    (epochs.get(key(queue, group)) ?? []).some((e) => e.join.end < t1 && (!e.drop || e.drop.start > t2));
  /**
   * A seek of the group on the queue (or its partition), or its deletion, that may have taken
   * effect between two times: either ends its leases. One begun before a pop can end the pop's
   * lease: it waits for the cursor the pop holds, then moves it.
   */
  const reset = (group: string, queue: string, partition: string | undefined, after: number, before: number) =>
    rec.events.some(
      (e) =>
        ((e.kind === 'seek' && e.httpStatus === 200 && (!partition || !e.partition || e.partition === partition)) ||
          (e.kind === 'drop' && e.httpStatus === 200)) &&
        e.group === group &&
        e.queue === queue &&
        e.end > after &&
        e.start < before,
    );

  // ---- lines: per (group, message) -------------------------------------------------------
  const lines = new Map<string, Line>();
  const line = (group: string, id: string) => {
    const k = `${group}\u0000${id}`;
    let l = lines.get(k);
    if (!l) lines.set(k, (l = { needs: [], clears: [], deliveries: [], acks: [] }));
    return l;
  };
  const groupsOf = (queue: string) => rec.groups.filter((g) => g.queue === queue).map((g) => g.group);
  const existedAfter = (m: Msg, t: number) => m.pushStart > t || (m.obs !== undefined && m.obs.lastSeen > t);
  for (const { queue, group } of rec.groups)
    for (const { join: j } of epochs.get(key(queue, group)) ?? []) {
      const fromMs = j.from ? isoMs(j.from) : undefined;
      for (const m of byQueue.get(queue) ?? []) {
        // a requeued copy is for the group that failed only: the others had it counted done
        if (m.doneFor?.includes(group) && j.start < m.pushEnd) continue;
        if (j.mode === 'all') {
          if (m.pushStart > j.start || (m.obs && m.obs.lastSeen > j.end))
            line(group, m.id).needs.push({ t: Math.max(m.pushStart, j.start), why: 'join(all)' });
        } else if (j.mode === 'new') {
          if (m.pushStart > j.end) line(group, m.id).needs.push({ t: m.pushStart, why: 'push after join(new)' });
        } else if (m.pushStart > j.end) {
          line(group, m.id).needs.push({ t: m.pushStart, why: 'push after join(from)' });
        } else if (
          m.createdMs !== undefined &&
          m.createdMs >= fromMs! - SLACK / 1000 &&
          m.obs &&
          m.obs.lastSeen > j.end
        ) {
          line(group, m.id).needs.push({ t: j.start, why: `join(from ${j.from})` });
        }
      }
    }
  for (const d of drops)
    for (const m of byQueue.get(d.queue) ?? []) {
      if (m.pushStart < d.end) line(d.group, m.id).clears.push({ a: d.start, b: d.end });
    }
  const seeks = rec.events.filter((e): e is SeekRec => e.kind === 'seek' && e.httpStatus === 200);
  for (const s of seeks) {
    const tsMs = s.timestamp ? isoMs(s.timestamp) : undefined;
    for (const m of byQueue.get(s.queue) ?? []) {
      if (s.partition && m.partition !== s.partition) continue;
      if (m.pushStart > s.end) continue; // after the seek: its push's need stands
      const l = line(s.group, m.id);
      if (s.toEnd || m.createdMs === undefined || m.createdMs < tsMs! - SLACK / 1000) {
        l.clears.push({ a: s.start, b: s.end });
      } else if (existedAfter(m, s.end)) {
        l.needs.push({
          t: s.end,
          why: `seek to ${s.timestamp}${s.partition ? ` on ${s.partition}` : ''} at ${rel(s.start)}`,
        });
      }
    }
  }
  for (const p of pops)
    for (const d of p.messages) {
      if (!msgs.has(d.id)) continue;
      const l = line(p.group, d.id);
      l.deliveries.push(p);
      // autoAck: committed inside the pop
      if (!p.leaseId)
        l.acks.push({ as: p.start, ae: p.end, success: true, status: 'completed', dlq: false, leaseId: '' });
    }
  // an operator's release ends a lease at once (any answer: a 404 may mean it had just ended)
  const releases = rec.events.filter((e): e is ReleaseRec => e.kind === 'release');
  const releasedBefore = (leaseId: string, after: number, t: number) =>
    releases.some((x) => x.leaseId === leaseId && x.start > after - 1000 && x.start < t);
  const extends_ = rec.events.filter((e): e is ExtendRec => e.kind === 'extend' && e.success);
  /** The earliest a pop's lease can have expired: its own length from the pop's start, or a successful extension's. */
  const liveUntil = (p: PopRec) =>
    Math.max(
      p.start + p.leaseSeconds * 1000,
      ...extends_.filter((x) => x.leaseId === p.leaseId).map((x) => x.start + x.seconds * 1000),
    );
  const acks = rec.events.filter((e): e is AckRec => e.kind === 'ack');
  for (const a of acks)
    for (const i of a.items) {
      if (!msgs.has(i.id)) continue;
      line(a.group, i.id).acks.push({
        as: a.start,
        ae: a.end,
        success: i.success === true,
        status: i.status,
        dlq: i.dlq === true,
        leaseId: i.leaseId,
      });
    }

  /** When a need is last created, and whether anything after it may have met it (lenient: the later bound of every span). */
  const outstanding = (l: Line | undefined) => {
    if (!l || !l.needs.length) return undefined;
    const need = l.needs.reduce((a, b) => (b.t > a.t ? b : a));
    const met =
      l.deliveries.some((p) => p.end > need.t) ||
      l.acks.some((a) => a.dlq && a.ae > need.t) ||
      l.clears.some((c) => c.b > need.t);
    return met ? undefined : need;
  };
  /** Whether the group certainly had not committed the message by `t`, given a need before `since`. */
  const surelyUncommitted = (l: Line | undefined, since: number, t: number) => {
    if (!l) return undefined;
    const needs = l.needs.filter((n) => n.t < since);
    if (!needs.length) return undefined;
    const need = needs.reduce((a, b) => (b.t > a.t ? b : a));
    const committed =
      l.acks.some((a) => a.ae > need.t && a.as < t && ((a.success && a.status === 'completed') || a.dlq)) ||
      l.clears.some((c) => c.b > need.t && c.a < t);
    return committed ? undefined : need;
  };

  // ---- removals --------------------------------------------------------------------------
  const groupEvictedFloor = new Map<string, number>();
  for (const m of msgs.values()) {
    const o = m.obs;
    if (!o || o.goneSeen === undefined) continue;
    const spec = specOf.get(m.queue)!;
    const gone = o.goneSeen;
    const del = deletedAt.get(m.id);
    if (del && del.start < gone) continue;
    const age = (secs: number | null) =>
      secs !== null && m.createdMs !== undefined && m.createdMs + secs * 1000 <= gone + SLACK;
    const byAge = age(spec.retention) || age(spec.maxWait);
    const uncommitted = groupsOf(m.queue)
      .filter((g) => existed(m.queue, g, o.lastSeen, gone))
      .map((g) => ({ g, need: surelyUncommitted(lines.get(`${g}\u0000${m.id}`), o.lastSeen, gone) }))
      .filter((x) => x.need);
    const byDone = age(spec.done) && uncommitted.length === 0;
    if (!byAge && !byDone) {
      add(
        age(spec.done) ? 'removed before every group committed it' : 'removed by no rule',
        `${describe(m)}${uncommitted.length ? `; uncommitted in ${uncommitted.map((x) => `${x.g} (${x.need!.why})`).join(', ')}` : ''}`,
      );
    }
    if (byAge && !byDone)
      for (const x of uncommitted) {
        if (spec.retention === null && spec.maxWait === null) continue;
        const k = key(m.queue, x.g);
        groupEvictedFloor.set(k, (groupEvictedFloor.get(k) ?? 0) + 1);
      }
    // inside a live lease: delivered, not acked, lease neither ended nor expired when it went
    for (const g of groupsOf(m.queue)) {
      const l = lines.get(`${g}\u0000${m.id}`);
      for (const p of l?.deliveries ?? []) {
        if (!p.leaseId || p.end > o.lastSeen || gone >= liveUntil(p)) continue;
        const acked = l!.acks.some((a) => a.as > p.start && a.as < gone);
        const ended =
          acks.some(
            (a) =>
              a.group === g &&
              a.start > p.start &&
              a.start < gone &&
              a.items.some((i) => i.leaseId === p.leaseId && i.partitionId === m.partitionId && i.status === 'failed'),
          ) ||
          reset(g, m.queue, m.partition, p.start, gone) ||
          releasedBefore(p.leaseId, p.start, gone);
        if (!acked && !ended) {
          add(
            'removed inside a live lease',
            `${describe(m)}; leased to ${g} by pop #${p.seq} at ${rel(p.start)}..${rel(p.end)} for ${p.leaseSeconds}s`,
          );
        }
      }
    }
  }

  // ---- every message reached every group that should get it --------------------------------
  for (const { queue, group } of rec.groups) {
    for (const m of byQueue.get(queue) ?? []) {
      const l = lines.get(`${group}\u0000${m.id}`);
      const need = outstanding(l);
      if (!need || !m.obs) continue;
      const o = m.obs;
      // removed while needed: the removal checks above judge whether a rule allowed it
      if (m.obs.goneSeen === undefined)
        add('never delivered', `${group}: ${describe(m)}; needed since ${rel(need.t)} (${need.why})`);
    }
  }

  // ---- order per partition per group: no pop passes over a message still due ------------
  const storedOn = new Map<string, Msg[]>();
  for (const m of msgs.values()) if (m.obs) storedOn.set(m.partitionId, [...(storedOn.get(m.partitionId) ?? []), m]);
  for (const p of pops) {
    const byPart = new Map<string, number[]>();
    for (const d of p.messages) {
      const o = rec.observed.get(d.id);
      byPart.set(d.partitionId, [...(byPart.get(d.partitionId) ?? []), o ? o.offset : NaN]);
    }
    for (const [pid, offsets] of byPart) {
      const known = offsets.filter((x) => !Number.isNaN(x));
      for (let i = 1; i < known.length; i++) {
        if (known[i] <= known[i - 1])
          add(
            'out of order in a batch',
            `pop #${p.seq} ${p.group}@${p.queue}/${partName(pid)}: offsets ${offsets.join(',')}`,
          );
      }
      if (!known.length) continue;
      const top = Math.max(...known);
      const inPop = new Set(p.messages.map((d) => d.id));
      for (const x of storedOn.get(pid) ?? []) {
        const o = x.obs!;
        if (inPop.has(x.id) || o.offset >= top) continue;
        if (!(x.pushEnd < p.start) || (o.goneSeen !== undefined && o.lastSeen <= p.end)) continue;
        const del = deletedAt.get(x.id);
        if (del && del.start < p.end) continue;
        const need = surelyUncommitted(lines.get(`${p.group}\u0000${x.id}`), p.start, p.end);
        if (need) {
          add(
            o.offset < Math.min(...known) ? 'delivered past an unconsumed message' : 'skipped a message inside a batch',
            `pop #${p.seq} ${p.group}@${p.queue}/${partName(pid)} at ${rel(p.start)} gave offsets ${offsets.join(',')} while offset ${o.offset} was due (${need.why}): ${describe(x)}`,
          );
        }
      }
    }
  }

  // ---- acks answered truthfully ----------------------------------------------------------
  const popOfLease = new Map<string, PopRec>();
  for (const p of pops) if (p.leaseId) popOfLease.set(p.leaseId, p);
  for (const a of acks)
    for (const i of a.items) {
      if (i.success !== false) continue;
      const o = rec.observed.get(i.id);
      if (i.error === 'Message not found') {
        if (o && o.firstSeen < a.start && o.lastSeen > a.end)
          add(
            'ack said "Message not found" for a stored message',
            `${a.group} ack at ${rel(a.start)}..${rel(a.end)} of ${i.tx}: stored ${rel(o.firstSeen)}..${rel(o.lastSeen)}`,
          );
        continue;
      }
      // refused although its lease was surely live and nothing had ended it
      const p = popOfLease.get(i.leaseId);
      if (!p || !(a.start > p.end) || !(a.end < liveUntil(p) - 20)) continue;
      const ended =
        acks.some(
          (b) =>
            b !== a &&
            b.group === a.group &&
            b.start < a.end &&
            b.start > p.start &&
            b.items.some(
              (j) =>
                j.leaseId === i.leaseId && j.partitionId === i.partitionId && (j.status === 'failed' || j.id === i.id),
            ),
        ) ||
        reset(a.group, p.queue, partName(i.partitionId), p.start, a.end) ||
        releasedBefore(p.leaseId, p.start, a.end) ||
        (deletedAt.get(i.id)?.start ?? Infinity) < a.end ||
        (o?.goneSeen !== undefined && o.lastSeen < a.end);
      if (!ended)
        add(
          'ack refused inside a live lease',
          `${a.group} ack at ${rel(a.start)}..${rel(a.end)} of ${i.tx} (${i.status}) answered ${JSON.stringify(i.error)}; lease of pop #${p.seq} at ${rel(p.start)}..${rel(p.end)} for ${p.leaseSeconds}s`,
        );
    }

  // ---- a paused cursor is not claimed ------------------------------------------------------
  const pauses = rec.events.filter((e): e is PauseRec => e.kind === 'pause' && e.httpStatus === 200);
  for (const z of pauses) {
    if (!z.paused || !z.until) continue;
    const until = isoMs(z.until);
    const resumed = pauses.find(
      (y) => y !== z && y.partitionId === z.partitionId && y.group === z.group && y.start > z.start,
    );
    const dropped = drops.find(
      (d) => d.group === z.group && rec.partitions.get(z.partitionId)?.queue === d.queue && d.start > z.start,
    );
    const ends = Math.min(until, resumed?.start ?? Infinity, dropped?.start ?? Infinity);
    for (const p of pops) {
      if (p.group !== z.group || !(p.start > z.end && p.end < ends - SLACK)) continue;
      if (p.messages.some((d) => d.partitionId === z.partitionId)) {
        add(
          'delivered while paused',
          `pop #${p.seq} ${p.group}@${p.queue}/${partName(z.partitionId)} at ${rel(p.start)}..${rel(p.end)}, paused at ${rel(z.start)}..${rel(z.end)} until ${rel(until)}`,
        );
      }
    }
  }

  // ---- never two live leases on one (partition, group) ----------------------------------
  const leasesOn = new Map<string, PopRec[]>();
  for (const p of pops) {
    if (!p.leaseId) continue;
    for (const pid of new Set(p.messages.map((d) => d.partitionId))) {
      const k = `${pid}\u0000${p.group}`;
      leasesOn.set(k, [...(leasesOn.get(k) ?? []), p]);
    }
  }
  for (const [k, list] of leasesOn) {
    const [pid, group] = k.split('\u0000');
    list.sort((a, b) => a.start - b.start);
    for (let i = 0; i < list.length; i++) {
      const p1 = list[i];
      const mine = p1.messages.filter((d) => d.partitionId === pid);
      for (let j = i + 1; j < list.length; j++) {
        const p2 = list[j];
        const live = liveUntil(p1);
        if (p2.start > live) continue;
        if (!(p1.end < p2.start) || !(p2.end < live - 20)) continue;
        const before = p2.end;
        const ackedAll = mine.every(
          (d) =>
            acks.some(
              (a) =>
                a.group === group && a.start > p1.start && a.start < before && a.items.some((i2) => i2.id === d.id),
            ) ||
            (deletedAt.get(d.id)?.start ?? Infinity) < before ||
            (rec.observed.get(d.id)?.goneSeen ?? Infinity) < before,
        );
        const failed = acks.some(
          (a) =>
            a.group === group &&
            a.start > p1.start &&
            a.start < before &&
            a.items.some((i2) => i2.leaseId === p1.leaseId && i2.partitionId === pid && i2.status === 'failed'),
        );
        const sought = reset(group, p1.queue, partName(pid), p1.start, before);
        if (!ackedAll && !failed && !sought && !releasedBefore(p1.leaseId, p1.start, before)) {
          add(
            'two live leases',
            `${group}@${p1.queue}/${partName(pid)}: pop #${p1.seq} (${rel(p1.start)}..${rel(p1.end)}, ${p1.leaseSeconds}s) and pop #${p2.seq} (${rel(p2.start)}..${rel(p2.end)})`,
          );
        }
      }
    }
  }
  for (const d of rec.doubleLeases) add('two live leases', `sampled: ${d}`);

  // ---- dedup: one message per (partition, transactionId) ---------------------------------
  const byTx = new Map<string, { push: PushRec; status?: string; id?: string }[]>();
  for (const p of pushes)
    for (const i of p.items) {
      if (!i.status) continue;
      const k = `${p.queue}/${i.partition}/${i.tx}`;
      byTx.set(k, [...(byTx.get(k) ?? []), { push: p, status: i.status, id: i.id }]);
    }
  for (const [k, list] of byTx) {
    list.sort((a, b) => a.push.start - b.push.start);
    const queued = list.filter((x) => x.status === 'queued');
    for (const q of queued.slice(1)) {
      const first = msgs.get(queued[0].id!);
      // stored for sure while the retry ran, or not (removed before it, or around it)
      const stored = first?.obs !== undefined && first.obs.lastSeen > q.push.end;
      add(
        stored
          ? 'retried push queued again while its message was stored'
          : 'retried push queued again after its message was removed',
        `${k}: queued at ${rel(queued[0].push.start)} and again at ${rel(q.push.start)}${first ? `; first: ${describe(first)}` : ''}`,
      );
    }
    if (!queued.length) add('duplicate of nothing', `${k}: answered ${list.map((x) => x.status).join(',')}`);
  }

  // ---- dead letters keep their payload ----------------------------------------------------
  const dlqListed = new Map(rec.end.deadLetters.map((d) => [`${d.group}\u0000${d.partitionId}\u0000${d.tx}`, d]));
  for (const [k, l] of lines) {
    const died = l.acks.filter((a) => a.dlq);
    if (!died.length) continue;
    const [group, id] = k.split('\u0000');
    const m = msgs.get(id)!;
    const last = Math.max(...died.map((a) => a.ae));
    if (l.needs.some((n) => n.t > last) || deletedAt.has(id)) continue; // replayed, or deleted by the operator
    if (drops.some((d) => d.group === group && d.queue === m.queue && d.end > last - 1000)) continue; // went with its group
    if (
      rec.events.some(
        (e) =>
          e.kind === 'requeue' &&
          e.group === group &&
          e.partitionId === m.partitionId &&
          e.tx === m.tx &&
          e.start > last - 1000,
      )
    )
      continue; // requeued
    const d = dlqListed.get(`${group}\u0000${m.partitionId}\u0000${m.tx}`);
    if (!d) add('dead letter gone', `${group}: ${describe(m)}, dead-lettered at ${rel(last)}`);
    else if (d.data !== rec.jsonb.get(m.payload))
      add(
        'dead letter lost its payload',
        `${group}: ${describe(m)}: data ${d.data}, pushed ${m.payload} (jsonb ${rec.jsonb.get(m.payload)})`,
      );
  }

  // ---- payloads delivered exactly: `data` is the jsonb text of what was pushed ------------
  for (const p of pops)
    for (const d of p.messages) {
      const m = msgs.get(d.id);
      if (!m) continue;
      const want = rec.jsonb.get(m.payload);
      if (want === undefined) add('payload not recounted', `${describe(m)}: pushed ${m.payload}`);
      else if (d.data !== want)
        add(
          'payload altered on delivery',
          `pop #${p.seq} ${p.group}@${p.queue} via instance ${p.instance}: ${describe(m)}: pushed ${JSON.stringify(m.payload)}, jsonb ${want}, delivered ${d.data}`,
        );
    }

  // ---- autoAck long polls: what a claim took reaches a client ----------------------------
  // Only autoAck pops and the drain consume these queues, and nothing removes their messages: a
  // message the group's cursor passed reached exactly one client of the group (a 200), and one it
  // did not pass is still there for the drain.
  for (const queue of rec.autoAckQueues)
    for (const group of groupsOf(queue)) {
      const cursorOf = new Map(
        rec.end.cursors.filter((c) => c.queue === queue && c.group === group).map((c) => [c.partitionId, c]),
      );
      for (const m of byQueue.get(queue) ?? []) {
        const got = pops.filter((p) => p.group === group && p.status === 200 && p.messages.some((d) => d.id === m.id));
        const c = cursorOf.get(m.partitionId);
        const passed =
          c !== undefined && m.obs !== undefined && (m.obs.offset <= c.committed || c.acked.includes(m.obs.offset));
        if (got.length > 1)
          add(
            'autoAck message delivered twice',
            `${group}: ${describe(m)}: pops ${got.map((p) => `#${p.seq} ${p.actor} ${rel(p.start)}..${rel(p.end)}`).join(', ')}`,
          );
        if (got.length === 0) {
          // the long polls of the group that were parked when it was pushed and answered 204
          const empty = pops.filter(
            (p) =>
              p.group === group &&
              p.waitMs !== undefined &&
              p.status === 204 &&
              p.start < m.pushEnd &&
              p.end > m.pushStart,
          );
          add(
            passed ? 'autoAck message claimed, delivered to no client' : 'pushed, never delivered',
            `${group}: ${describe(m)}${passed ? `; the cursor passed it (committed ${c!.committed})` : ''}; long polls parked across its push that answered 204: ${
              empty
                .map(
                  (p) =>
                    `#${p.seq} ${p.actor} via instance ${p.instance} timeout ${p.waitMs} ms ${rel(p.start)}..${rel(p.end)}`,
                )
                .join(', ') || 'none'
            }`,
          );
        }
      }
    }

  // ---- Prometheus counters against what the clients saw -----------------------------------
  // delivered: every message a pop answered (redeliveries included); acked: every message a
  // successful 'completed' ack or an autoAck pop completed, never an offset passed because its
  // message was gone; so acked <= delivered. An ack of a message the job may have removed while
  // the ack ran, or after a seek that may have passed it, may rightly count nothing: acked lies
  // between the acks surely counted and all the acks that succeeded (exactly those on the queues
  // only autoAck pops and the drain consume). The counters carry database totals: every instance
  // answers the same. A deleted group took its counters with it: not judged.
  const seen = new Map<string, { delivered: number; acked: number; surelyAcked: number }>();
  const seenOf = (queue: string, group: string) => {
    const k = key(queue, group);
    let v = seen.get(k);
    if (!v) seen.set(k, (v = { delivered: 0, acked: 0, surelyAcked: 0 }));
    return v;
  };
  for (const p of pops) {
    const v = seenOf(p.queue, p.group);
    v.delivered += p.messages.length;
    if (!p.leaseId) {
      v.acked += p.messages.length;
      v.surelyAcked += p.messages.length;
    }
  }
  const ackedOnce = new Set<string>();
  const completedOnce = new Set<string>();
  // A failed ack that dead-letters a message makes it done for the group: an ack of it from an
  // earlier holder, whose lease expired meanwhile, then answers success and completes nothing.
  const deadLettered = new Map<string, { start: number; end: number }[]>();
  for (const a of acks)
    for (const i of a.items)
      if (i.status === 'failed' && i.success === true && i.dlq === true) {
        const k = `${a.group}\u0000${i.id}`;
        deadLettered.set(k, [...(deadLettered.get(k) ?? []), { start: a.start, end: a.end }]);
      }
  for (const p of pops) if (!p.leaseId) for (const d of p.messages) completedOnce.add(`${p.group}\u0000${d.id}`);
  for (const a of acks)
    for (const i of a.items) {
      const m = msgs.get(i.id);
      if (!m || i.success !== true || i.status !== 'completed') continue;
      // an ack of a message another holder completed already answers success and completes nothing:
      // surely counted is one completion per (group, message); at most, every success
      const once = `${a.group}\u0000${i.id}\u0000${i.leaseId}`;
      if (ackedOnce.has(once)) continue;
      ackedOnce.add(once);
      const v = seenOf(m.queue, a.group);
      v.acked++;
      const first = `${a.group}\u0000${i.id}`;
      const p = popOfLease.get(i.leaseId);
      const stored =
        m.obs !== undefined &&
        (m.obs.goneSeen === undefined || m.obs.lastSeen > a.end) &&
        !((deletedAt.get(m.id)?.start ?? Infinity) < a.end);
      const deadMeanwhile = p && (deadLettered.get(first) ?? []).some((d) => d.start < a.end && d.end > p.start);
      if (
        stored &&
        p &&
        !deadMeanwhile &&
        !completedOnce.has(first) &&
        !reset(a.group, m.queue, m.partition, p.start, a.end)
      )
        v.surelyAcked++;
      completedOnce.add(first);
    }
  const scraped = new Map<string, EndState['metrics']>();
  for (const x of rec.end.metrics) {
    if (x.error) {
      add('counters could not be scraped', `instance ${x.instance}: ${x.error}`);
      continue;
    }
    scraped.set(key(x.queue, x.group), [...(scraped.get(key(x.queue, x.group)) ?? []), x]);
  }
  const instances = new Set(rec.end.metrics.map((x) => x.instance));
  for (const { queue, group } of rec.groups) {
    if (drops.some((d) => d.queue === queue && d.group === group)) continue;
    const k = key(queue, group);
    const v = seen.get(k) ?? { delivered: 0, acked: 0, surelyAcked: 0 };
    const exact = rec.autoAckQueues.includes(queue);
    const series = scraped.get(k) ?? [];
    if (series.length < instances.size && v.delivered > 0)
      add(
        'counters missing from /metrics/prometheus',
        `${group}@${queue}: ${series.length} of ${instances.size} instances`,
      );
    for (const x of series) {
      const at = `${group}@${queue} on instance ${x.instance}`;
      if ((x.acked ?? 0) > (x.delivered ?? 0))
        add('acked above delivered (Prometheus)', `${at}: delivered ${x.delivered}, acked ${x.acked}`);
      if (x.delivered !== v.delivered)
        add(
          'delivered differs from the deliveries seen (Prometheus)',
          `${at}: counted ${x.delivered}, clients got ${v.delivered}`,
        );
      const acked = x.acked ?? 0;
      if (exact ? acked !== v.surelyAcked || acked !== v.acked : acked < v.surelyAcked || acked > v.acked)
        add(
          'acked differs from the acks seen (Prometheus)',
          `${at}: counted ${acked}, clients completed ${exact ? v.acked : `${v.surelyAcked} surely, ${v.acked} at most`}`,
        );
    }
  }

  // ---- storage bounded: nothing older than the option's bound outside a live lease ------
  for (const a of rec.overAged) {
    const m = msgs.get(a.id);
    add(
      'stored past the retention bound',
      `${m ? describe(m) : `${a.queue} offset ${a.offset}`}: ${a.ageSeconds.toFixed(1)} s old at ${rel(a.at)}, of age and outside every live lease for ${a.outsideSeconds.toFixed(1)} s (bound ${a.boundSeconds} s)`,
    );
  }

  // ---- the end: drained, lag 0, counters equal a recount ----------------------------------
  if (!rec.drained) add('drain did not finish', 'pops kept returning messages until the time bound');
  for (const c of rec.end.cursors) {
    if (c.storedAbove > 0)
      add(
        'stored messages left unconsumed after the drain',
        `${c.group}@${c.queue}/${partName(c.partitionId)}: committed ${c.committed}, head ${c.head}, ${c.storedAbove} stored above`,
      );
    if (c.leased)
      add(
        'lease left live after the drain',
        `${c.group}@${c.queue}/${partName(c.partitionId)}: committed ${c.committed}, head ${c.head}`,
      );
  }
  for (const g of rec.end.lags) if (g.lag !== 0) add('lag after the drain', `${g.group}@${g.queue}: lag ${g.lag}`);
  for (const c of rec.end.counters) {
    if (c.error) add('counter could not be recounted', `${c.name}: ${c.error}`);
    else if (c.counted !== c.actual)
      add('counter differs from a recount', `${c.name} of ${c.key}: counted ${c.counted}, recount ${c.actual}`);
  }
  const evictedOf = new Map<string, number>();
  for (const c of rec.end.cursors)
    evictedOf.set(key(c.queue, c.group), (evictedOf.get(key(c.queue, c.group)) ?? 0) + c.evicted);
  for (const [k, floor] of groupEvictedFloor) {
    const [queue, group] = k.split('\u0000');
    if (drops.some((d) => d.queue === queue && d.group === group)) continue; // its counters went with it
    if ((evictedOf.get(k) ?? 0) < floor)
      add(
        'evictions undercounted',
        `${group}@${queue}: evicted ${evictedOf.get(k) ?? 0}, at least ${floor} removed before it committed them`,
      );
  }
  for (const [k, n] of evictedOf) {
    const [queue] = k.split('\u0000');
    // pushed and not stored at the end (some went before any look saw them)
    const removed = (byQueue.get(queue) ?? []).filter((m) => !m.obs || m.obs.goneSeen !== undefined).length;
    if (n > removed)
      add(
        'evictions overcounted',
        `${k.replace('\u0000', '@')}: evicted ${n}, but only ${removed} messages of the queue were removed`,
      );
  }
  return out;
}

export type { JoinRec };
