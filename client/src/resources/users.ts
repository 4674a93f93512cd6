/**
 * `client.users` (CONTRACT "Client library", "People"): the company's console users, to choose whom a task is
 * assigned to (`tasks.create({ ..., assigned_to: user.user_id })`; the task then carries the user as `assignee`).
 */
import { unwrapPage, type ApiContext } from "../api";
import { iteratePages, type Page } from "../pagination";
import type { User, UserListQuery } from "../types";

/** People of the company (GET /v1/ext/users; any valid key). */
export class Users {
  constructor(private readonly ctx: ApiContext) {}

  /**
   * One page of users, by display name (users without one last), then email (GET /v1/ext/users).
   * @param query `limit` (1..500), `cursor`.
   * @returns `{ data, nextCursor }`, each user `{ user_id, name, email }` (`name` null until the user sets one).
   * @throws StagelineError subclasses, ConnectionError.
   */
  list(query: UserListQuery = {}): Promise<Page<User>> {
    return unwrapPage(this.ctx.read((fetch) => this.ctx.api.GET("/v1/ext/users", { params: { query }, fetch })));
  }

  /**
   * Every user across all pages, fetching a page only when the caller reaches it.
   * @throws as `list`.
   */
  iterate(query: UserListQuery = {}): AsyncGenerator<User, void, undefined> {
    return iteratePages((cursor) => this.list({ ...query, cursor }), query.cursor);
  }
}
