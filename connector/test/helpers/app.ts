/**
 * Test helpers: the app under test (from src/, through ts-jest), an app tester, fixed auth data for the fake
 * Stageline server at SERVER of the unit tests (mocked in nock.ts), fixtures in the contract's shapes, and a reader
 * for the errors zapier-platform-core throws (AppError and ThrottledError carry JSON in their message).
 */
import './core-http-patch'; // before anything loads nock: see there
import { createAppTester, tools } from 'zapier-platform-core';
import { EVENT_RESOURCES, type CustomField, type EventName, type FeedEvent, type Item, type Me, type Note, type Pipeline, type Task, type User } from '@stageline/shared';
import App from '../../src/index';
import { listPipelines } from '../../src/triggers/pipeline-list';
import { listStages } from '../../src/triggers/stage-list';

tools.env.inject();

export { App };

/**
 * The app tester. Core's handler patches Node's shared `http`/`https` modules once per process to log requests made
 * by any library (app flag `skipHttpPatch` turns that off). In a jest worker that runs several test files, that
 * patch would capture whichever interceptor nock had installed at the time and outlive it, so requests of later
 * files would bypass nock (or hit a removed interceptor). The tests therefore run the app with the patch off; the
 * app only makes requests through `z.request`, which core logs on its own.
 */
export const appTester = createAppTester({ ...App, flags: { ...App.flags, skipHttpPatch: true } });

/**
 * The demo company's Sales pipeline and its Lead stage on a live server (helpers/live-server.ts), read through the
 * dropdown triggers as a Zap would. @throws Error naming what the server listed when either is missing.
 */
export async function demoSalesLead(auth: { api_key: string; server_url: string }): Promise<{ pipelineId: string; leadId: string }> {
  const pipelines = await appTester(listPipelines, { authData: auth });
  const pipeline = pipelines.find((p) => p.name === 'Sales');
  if (!pipeline) throw new Error(`no Sales pipeline in ${JSON.stringify(pipelines)}`);
  const stages = await appTester(listStages, { authData: auth, inputData: { pipeline_id: pipeline.id } });
  const lead = stages.find((s) => s.name === 'Lead');
  if (!lead) throw new Error(`no Lead stage in ${JSON.stringify(stages)}`);
  return { pipelineId: pipeline.id, leadId: lead.id };
}

/** The fake self-hosted server of the unit tests. */
export const SERVER = 'https://stageline.test';
export const API_KEY = 'sk_test_0123456789abcdef';
export const authData = { api_key: API_KEY, server_url: SERVER };

/** A thrown core error as data: `name` plus the JSON fields of its message (AppError: message, code, status). */
export interface ThrownError {
  name: string;
  message: string;
  code?: string;
  status?: number;
  delay?: number | null;
}

/** Awaits `promise`, expecting it to reject; returns the error with its JSON message unpacked. */
export async function thrown(promise: Promise<unknown>): Promise<ThrownError> {
  try {
    await promise;
  } catch (err) {
    const e = err as Error;
    try {
      const parsed = JSON.parse(e.message) as Omit<ThrownError, 'name'>;
      return { name: e.name, ...parsed };
    } catch {
      return { name: e.name, message: e.message };
    }
  }
  throw new Error('expected the promise to reject, but it resolved');
}

export const ME: Me = {
  company: { id: 'c0mpany-1', name: 'Acme Corp' },
  key: { id: 'key-1', name: 'Zapier key', scopes: ['items:read', 'items:write', 'tasks:read', 'tasks:write', 'hooks:manage'], expires_at: null },
  credential: { type: 'key', app: null },
};

export const SALES: Pipeline = { id: 'pl-sales', name: 'Sales', created_at: '2026-01-15T08:00:00.000Z' };
export const SUPPORT: Pipeline = { id: 'pl-support', name: 'Support', created_at: '2026-01-16T08:00:00.000Z' };

export const SALES_FIELDS: CustomField[] = [
  { key: 'email', label: 'Email', type: 'email', required: true },
  { key: 'deal_value', label: 'Deal value', type: 'number' },
];

export const SUPPORT_FIELDS: CustomField[] = [
  { key: 'email', label: 'Email', type: 'email' },
  { key: 'severity', label: 'Severity', type: 'select', options: ['Low', 'High'] },
  { key: 'due_on', label: 'Due on', type: 'date' },
  { key: 'vip', label: 'VIP', type: 'boolean' },
];

/** An item of the Sales pipeline, as the API returns it. */
export function item(overrides: Partial<Item> = {}): Item {
  return {
    item_id: 'itm-1',
    short_id: 'SALES-1',
    name: 'Acme: 50 seats',
    pipeline: 'Sales',
    pipeline_id: SALES.id,
    stage: 'Lead',
    stage_id: 'stg-lead',
    status: 'Open',
    status_id: 'sts-open',
    contact_id: null,
    source: 'zapier',
    email: 'ada@acme.example',
    deal_value: 1500,
    created_at: '2026-03-01T09:30:00.000Z',
    updated_at: '2026-03-01T09:30:00.000Z',
    version: 1,
    ...overrides,
  };
}

/** A task, as the API returns it. */
export function task(overrides: Partial<Task> = {}): Task {
  return {
    task_id: 'tsk-1',
    title: 'Call Ada',
    description: null,
    due_at: '2026-03-05T15:00:00.000Z',
    priority: 'none',
    is_completed: false,
    task_type: 'to_do',
    assigned_to: 'maria',
    assignee: null,
    created_by: 'key-1',
    item_id: null,
    completed_at: null,
    notes: null,
    duration_minutes: null,
    reminder_minutes: null,
    created_at: '2026-03-01T09:31:00.000Z',
    updated_at: '2026-03-01T09:31:00.000Z',
    ...overrides,
  };
}

/** A note on the item of `item()`, as the API returns it. */
export function note(overrides: Partial<Note> = {}): Note {
  return {
    note_id: 'nte-1',
    item_id: 'itm-1',
    body: 'Ada wants **annual billing**.\n\n- proposal by Friday',
    pinned: false,
    created_by: 'key-1',
    created_at: '2026-03-02T10:15:00.000Z',
    updated_at: '2026-03-02T10:15:00.000Z',
    version: 1,
    ...overrides,
  };
}

/**
 * Events of the feed (GET /v1/ext/events, CONTRACT "Events feed"), newest first as the feed lists them: one per
 * delivery body in `bodies`, of `event`, with `resource_id` from the body's id and made-up event ids.
 */
export function feedEvents(event: EventName, bodies: readonly object[]): FeedEvent[] {
  const idKey = { items: 'item_id', tasks: 'task_id', notes: 'note_id' }[EVENT_RESOURCES[event]];
  return bodies.map((body, i) => {
    const data = body as Record<string, unknown>;
    return {
      event_id: `0190${String(bodies.length - i).padStart(4, '0')}-0000-7000-8000-000000000000`,
      event,
      occurred_at: typeof data.updated_at === 'string' ? data.updated_at : '2026-03-01T09:30:00.000Z',
      resource_id: String(data[idKey]),
      data,
    };
  });
}

/** A console user of the company, as GET /v1/ext/users returns it. */
export function user(overrides: Partial<User> = {}): User {
  return { user_id: 'usr-1', name: 'Maria Lopez', email: 'maria@acme.example', ...overrides };
}

/** Zapier's cursor storage of a paging trigger (`z.cursor`), which only exists on Zapier's side: a test double. */
export interface CursorStore {
  stored: string | null;
  get(): Promise<string | null>;
  set(cursor: string): Promise<null>;
}

/** An empty cursor store for one paging sequence. */
export function cursorStore(): CursorStore {
  const store: CursorStore = {
    stored: null,
    get: async () => store.stored,
    set: async (cursor: string) => {
      store.stored = cursor;
      return null;
    },
  };
  return store;
}

/**
 * Runs a paging trigger's perform like Zapier does for page `page` of a dropdown: through the app tester (real
 * middleware and requests), with `bundle.meta.page` set and `z.cursor` backed by `store`.
 */
export function runPage<T>(
  perform: (z: import('zapier-platform-core').ZObject, bundle: import('zapier-platform-core').Bundle) => Promise<T>,
  bundle: { authData: Record<string, string>; inputData?: Record<string, unknown> },
  page: number,
  store: CursorStore,
): Promise<T> {
  return appTester((z: import('zapier-platform-core').ZObject, b: import('zapier-platform-core').Bundle) => perform({ ...z, cursor: store } as never, b), {
    ...bundle,
    inputData: bundle.inputData ?? {},
    meta: { page, isFillingDynamicDropdown: true },
  } as never) as Promise<T>;
}
