// The one table primitive's paging (components/list-table.tsx): which rows a page shows, whether
// Next goes anywhere, and when the page asked for is past the last one.
import { describe, expect, it } from 'vitest';
import { pageOf, pageRange } from '@/components/list-table';

describe('pageRange', () => {
  it('a full page, then the last one', () => {
    expect(pageRange(1, 50, 120, 50)).toEqual({ total: 120, first: 1, last: 50, pastLast: false, hasNext: true });
    expect(pageRange(3, 50, 120, 20)).toEqual({ total: 120, first: 101, last: 120, pastLast: false, hasNext: false });
  });

  it('nothing at all', () => {
    expect(pageRange(1, 50, 0, 0)).toEqual({ total: 0, first: 0, last: 0, pastLast: false, hasNext: false });
  });

  it('past the last page: no rows shown, no Next', () => {
    expect(pageRange(99, 50, 1, 0)).toEqual({ total: 1, first: 0, last: 0, pastLast: true, hasNext: false });
  });

  it('reads the page from the URL', () => {
    expect([pageOf(undefined), pageOf('3'), pageOf('x'), pageOf('-2')]).toEqual([1, 3, 1, 1]);
  });
});
