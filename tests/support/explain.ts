// Plans PostgreSQL actually ran: auto_explain of a connection's nested statements (with ANALYZE),
// read from its notices, and how many rows each plan node read.
import pg from 'pg';
import { expect } from 'vitest';

export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}
export interface Explained {
  text: string;
  plan: PlanNode;
}

export const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];
export const rowsRead = (n: PlanNode) =>
  ((n['Actual Rows'] ?? 0) + (n['Rows Removed by Filter'] ?? 0) + (n['Rows Removed by Index Recheck'] ?? 0)) *
  (n['Actual Loops'] ?? 1);

/** A connection as the app's are, whose every nested statement's plan is captured. */
export async function explainingClient(url: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const plans: Explained[] = [];
  const unreadable: string[] = [];
  client.on('notice', (msg) => {
    const text = msg.message ?? '';
    const at = text.indexOf('plan:\n');
    if (at < 0) return;
    try {
      const doc = JSON.parse(text.slice(at + 6));
      plans.push({ text: doc['Query Text'], plan: doc.Plan });
    } catch (err) {
      // a throw here would break the connection's message loop and hang the test: note it instead
      unreadable.push(`${(err as Error).message}: ${text.slice(0, 300)}`);
    }
  });
  await client.query(`load 'auto_explain'`);
  await client.query(`set auto_explain.log_min_duration = 0; set auto_explain.log_nested_statements = on;
    set auto_explain.log_analyze = on; set auto_explain.log_timing = off; set auto_explain.log_format = json;
    set client_min_messages = log`);
  return {
    client,
    /** The plans of the nested statements `fn` ran (the top-level call itself left out). */
    async capture(fn: () => Promise<unknown>): Promise<Explained[]> {
      const from = plans.length;
      await fn();
      await new Promise((r) => setImmediate(r));
      expect(unreadable).toEqual([]);
      return plans.slice(from).filter((p) => !/^\s*select \* from queen\.\w+\(\$/i.test(p.text));
    },
  };
}
