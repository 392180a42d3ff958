/** The query parameters of the leases page and of GET /api/v1/leases that the page forwards. */
export const LEASE_FILTERS = [
  'lease',
  'queue',
  'group',
  'holder',
  'holderIs',
  'state',
  'minDeliveries',
  'sort',
  'page',
] as const;

/** Leases per page on the dashboard. */
export const LEASES_PAGE_SIZE = 50;
