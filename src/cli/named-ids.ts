// The event and batch ids a command names, checked: `mailroom event 999`, and a filter by
// --event or --batch that matched nothing, say "no such id" and exit 1 in one wording,
// rather than an empty list that reads like "nothing there yet".

import type { Mailroom } from '../mailroom.js';

export function noEventMessage(id: string): string {
  return `No event with id ${id}; run \`mailroom events\` to list ids.`;
}

export function noBatchMessage(id: string): string {
  return `No batch with id ${id}; a child job shows its batch id in \`mailroom job ID\`.`;
}

/** Throws (exit 1) when a filter's --event or --batch names nothing that exists. */
export async function assertNamedIdsExist(mr: Mailroom, filter: { readonly eventId?: string; readonly batchId?: string }): Promise<void> {
  if (filter.eventId !== undefined && !(await mr.getEvent(filter.eventId))) throw new Error(noEventMessage(filter.eventId));
  if (filter.batchId !== undefined && !(await mr.getBatch(filter.batchId))) throw new Error(noBatchMessage(filter.batchId));
}
