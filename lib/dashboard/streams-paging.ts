// The Streams page's paging, shared by the listing (lib/dashboard/streams.ts) and the page's view
// (a client component, which cannot import the listing's database code).

/** Queries a page of the listing holds unless `pageSize` says otherwise, and at most. */
export const STREAMS_PAGE_SIZE = 50;
export const MAX_STREAMS_PAGE_SIZE = 500;
/** Shards listed per query, most state first; `shardCount` counts them all. */
export const SHARDS_LISTED = 100;
