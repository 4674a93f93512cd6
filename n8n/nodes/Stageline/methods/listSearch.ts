/**
 * Searchable pickers (`listSearch`) of items and tasks, pages of 100 (items: one page per call; tasks: up to four
 * pages when the filter matches nothing yet); n8n passes the `Link: rel="next"`
 * URL back as `paginationToken` for the next page (CONTRACT "Lists": the cursor is opaque).
 */
import type { ILoadOptionsFunctions, INodeListSearchResult } from 'n8n-workflow';
import type { Item, Task } from '@stageline/shared';
import { apiPath } from '../../shared/server-url';
import { listPage, type ListPage } from '../../shared/transport';

/** Entries per picker page. */
export const PICKER_PAGE_SIZE = 100;

/** CONTRACT "Lists": shortest item search text (`q`); shorter texts list every item. */
const ITEM_SEARCH_MIN = 2;

/**
 * Items, newest first: `filter` of two or more characters searches the names (`q`, case-insensitive).
 * Each result is "name (short ID)" with the item id as value.
 */
export async function searchItems(
	this: ILoadOptionsFunctions,
	filter?: string,
	paginationToken?: string,
): Promise<INodeListSearchResult> {
	const text = (filter ?? '').trim();
	const qs = text.length >= ITEM_SEARCH_MIN ? { q: text.slice(0, 100), limit: PICKER_PAGE_SIZE } : { limit: PICKER_PAGE_SIZE };
	const page = paginationToken
		? await listPage<Item>(this, { url: paginationToken })
		: await listPage<Item>(this, { url: apiPath('items'), qs });
	return {
		results: page.results.map((item) => ({ name: `${item.name} (${item.short_id})`, value: item.item_id })),
		paginationToken: page.next ?? undefined,
	};
}

/** Pages the task picker reads for one call when a filter matches nothing yet (each page is one request). */
export const TASK_PICKER_MAX_PAGES = 4;

/**
 * Tasks: the list has no text search, so `filter` keeps the tasks whose title contains it (case-insensitive),
 * reading further pages (up to TASK_PICKER_MAX_PAGES per call) until one matches or the list ends; the next page's
 * URL is handed back as `paginationToken`. Each result is "title (due date)" with the task id as value.
 */
export async function searchTasks(
	this: ILoadOptionsFunctions,
	filter?: string,
	paginationToken?: string,
): Promise<INodeListSearchResult> {
	const text = (filter ?? '').trim().toLowerCase();
	const results: INodeListSearchResult['results'] = [];
	let next: string | null = paginationToken ?? null;
	for (let pages = 0; pages < TASK_PICKER_MAX_PAGES && results.length === 0; pages++) {
		if (pages > 0 && next === null) break;
		const page: ListPage<Task> = next
			? await listPage<Task>(this, { url: next })
			: await listPage<Task>(this, { url: apiPath('tasks'), qs: { limit: PICKER_PAGE_SIZE } });
		for (const task of page.results) {
			if (text === '' || task.title.toLowerCase().includes(text)) {
				results.push({ name: `${task.title} (due ${task.due_at.slice(0, 10)})`, value: task.task_id });
			}
		}
		next = page.next;
	}
	return { results, paginationToken: next ?? undefined };
}
