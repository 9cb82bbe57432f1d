// A page of endpoints with each one's health, for the operator's endpoints page and the
// tenant portal alike: the endpoints in id order (keyset), then one health read per row,
// so a page costs a bounded number of small indexed reads however many endpoints exist.

import { EndpointNotFoundError } from '../core/errors.js';
import type { Mailroom } from '../mailroom.js';
import type { EndpointRow } from './views/endpoints.js';

export interface EndpointRowsPage {
  readonly rows: EndpointRow[];
  /** The cursor of the next page, or null on the last one. */
  readonly nextAfter: string | null;
}

export async function endpointRowsPage(mr: Mailroom, filter: { readonly tenant?: string; readonly after?: string }, pageSize: number): Promise<EndpointRowsPage> {
  const endpoints = await mr.endpoints.list({ ...filter, limit: pageSize + 1 });
  const page = endpoints.slice(0, pageSize);
  const rows = await Promise.all(page.map(async (endpoint) => ({ endpoint, health: await healthOf(mr, endpoint.id) })));
  return { rows, nextAfter: endpoints.length > pageSize ? page[page.length - 1]!.id : null };
}

/** An endpoint's health, or null when it was removed since it was listed. */
export async function healthOf(mr: Mailroom, endpointId: string) {
  try {
    return await mr.endpoints.health(endpointId);
  } catch (error) {
    if (error instanceof EndpointNotFoundError) return null;
    throw error;
  }
}
