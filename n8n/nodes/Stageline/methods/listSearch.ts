/**
 * Searchable pickers (`listSearch`) of items, tasks and users, pages of 100 (items: one page per call; tasks and
 * users: up to four pages when the filter matches nothing yet); n8n passes the `Link: rel="next"`
 * URL back as `paginationToken` for the next page (CONTRACT "Lists": the cursor is opaque).
 */
import type { ILoadOptionsFunctions, INodeListSearchResult } from 'n8n-workflow';
import type { Item, Task, User } from '@stageline/shared';
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

/** Pages the task and user pickers read for one call when a filter matches nothing yet (each page is one request). */
export const TASK_PICKER_MAX_PAGES = 4;

/**
 * A picker over a list without text search: keeps the records `searchText` of which contains `filter`
 * (case-insensitive), reading further pages (up to TASK_PICKER_MAX_PAGES per call) until one matches or the list
 * ends; the next page's URL is handed back as `paginationToken`.
 * @param resource the list's path under /v1/ext (`tasks`, `users`).
 */
async function filteredPages<T>(
	context: ILoadOptionsFunctions,
	resource: string,
	filter: string | undefined,
	paginationToken: string | undefined,
	searchText: (record: T) => string,
	toResult: (record: T) => INodeListSearchResult['results'][number],
): Promise<INodeListSearchResult> {
	const text = (filter ?? '').trim().toLowerCase();
	const results: INodeListSearchResult['results'] = [];
	let next: string | null = paginationToken ?? null;
	for (let pages = 0; pages < TASK_PICKER_MAX_PAGES && results.length === 0; pages++) {
		if (pages > 0 && next === null) break;
		const page: ListPage<T> = next
			? await listPage<T>(context, { url: next })
			: await listPage<T>(context, { url: apiPath(resource), qs: { limit: PICKER_PAGE_SIZE } });
		for (const record of page.results) {
			if (text === '' || searchText(record).toLowerCase().includes(text)) results.push(toResult(record));
		}
		next = page.next;
	}
	return { results, paginationToken: next ?? undefined };
}

/**
 * Tasks: the list has no text search, so `filter` keeps the tasks whose title contains it (`filteredPages`). Each
 * result is "title (due date)" with the task id as value.
 */
export async function searchTasks(
	this: ILoadOptionsFunctions,
	filter?: string,
	paginationToken?: string,
): Promise<INodeListSearchResult> {
	return filteredPages<Task>(this, 'tasks', filter, paginationToken, (task) => task.title, (task) => ({
		name: `${task.title} (due ${task.due_at.slice(0, 10)})`,
		value: task.task_id,
	}));
}

/**
 * Users of the company (GET /v1/ext/users, CONTRACT "People"), by name then email: the list has no text search, so
 * `filter` keeps the users whose name or email contains it (`filteredPages`). Each result is "name (email)" (the
 * email alone for a user without a display name) with the `user_id` as value.
 */
export async function searchUsers(
	this: ILoadOptionsFunctions,
	filter?: string,
	paginationToken?: string,
): Promise<INodeListSearchResult> {
	return filteredPages<User>(this, 'users', filter, paginationToken, (user) => `${user.name ?? ''} ${user.email}`, (user) => ({
		name: user.name ? `${user.name} (${user.email})` : user.email,
		value: user.user_id,
	}));
}
