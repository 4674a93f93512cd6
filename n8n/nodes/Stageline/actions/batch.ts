/**
 * Batches of the Stageline node (issue 31 item 5; CONTRACT "Batch writes"): Item → Create, Update and Create or Update
 * and Task → Create and Update with several input items send `POST /v1/ext/items/batch` / `POST /v1/ext/tasks/batch`
 * (non-atomic) with up to 100 operations each, one request (and one rate-limit unit) per batch instead of one per item.
 * Each result is mapped back to its input item in order: a success becomes that item's output, a failure its error
 * (the node applies Continue On Fail per item), exactly as the single request would have answered.
 *
 * - Idempotency: one `Idempotency-Key` per batch, derived (nodes/shared/idempotency.ts) from the execution id, the
 *   workflow, the node, its run index, the operation and the input indexes in the batch. Retry On Fail reruns the node
 *   with the same input, so every batch is rebuilt with the same operations and the same key: Stageline replays the
 *   first answer of a batch it already ran (nothing created or changed twice) and runs the ones it never received.
 * - An input item with its own Idempotency Key (Additional Fields) is sent alone with that key, as before, so the key
 *   keeps its meaning across executions; the batch before it is sent first, so writes keep the input order.
 * - A body over BATCH_MAX_BODY_CHARS starts a new batch (Stageline refuses requests over 1 MiB with 413).
 * - A server without the batch endpoints (404 or 405: an older Stageline) gets the same operations one request each.
 * - Without Continue On Fail the node stops after the batch that holds the first failure (in single mode it stopped at
 *   the failing item; within a non-atomic batch the operations after it were applied).
 */
import { NodeApiError, NodeOperationError, type IDataObject, type IExecuteFunctions } from 'n8n-workflow';
import type { ItemBatchResult, TaskBatchResult } from '@stageline/shared';
import { apiPath } from '../../shared/server-url';
import { apiRequest, IDEMPOTENCY_KEY_HEADER, problemError } from '../../shared/transport';
import { REQUEST_ID_HEADER } from '../../shared/problem';
import { derivedKey, givenIdempotencyKey } from './idempotency-key';
import { createBodyAt, itemHandlers, updateAt, upsertResultOf, UPSERT_RESULT_FIELD } from './item';
import { taskCreateBodyAt, taskHandlers, taskUpdateAt } from './task';

/** CONTRACT "Batch writes": the most operations in one batch (BATCH_MAX_OPERATIONS of @stageline/shared). */
export const BATCH_MAX_OPERATIONS = 100;

/** A batch's JSON is kept under this many characters (CONTRACT "Errors": bodies over 1 MiB are `413`). */
export const BATCH_MAX_BODY_CHARS = 900_000;

/** One result of a batch (items or tasks). */
type BatchResult = ItemBatchResult | TaskBatchResult;

/** What one input item came to: its output JSON, or the error of its operation. */
export type Outcome = { ok: true; json: IDataObject } | { ok: false; error: NodeApiError | NodeOperationError };

/** An operation that can be batched. */
interface BatchableOperation {
	/** `items` or `tasks` (the batch is POST /v1/ext/<resource>/batch). */
	resource: 'items' | 'tasks';
	/** Whether the input item carries its own Idempotency Key (it is then sent alone with it). */
	ownKey: boolean;
	/** The batch operation of the input item (`op` and the body the single request takes). */
	build(context: IExecuteFunctions, itemIndex: number): Promise<IDataObject>;
	/** The output JSON of a successful result (what the single request's handler returns). */
	output(result: BatchResult): IDataObject;
	/** The single request (for an item with its own key, and for servers without batches). */
	single(context: IExecuteFunctions, itemIndex: number): Promise<object>;
}

const itemOf = (result: BatchResult) => ((result as ItemBatchResult).item ?? {}) as IDataObject;
const taskOf = (result: BatchResult) => ((result as TaskBatchResult).task ?? {}) as IDataObject;

/** The batchable operations by resource and operation. */
export const BATCHABLE: Record<string, Record<string, BatchableOperation>> = {
	item: {
		create: {
			resource: 'items',
			ownKey: true,
			build: async (context, i) => ({ op: 'create', ...(await createBodyAt(context, i)) }) as IDataObject,
			output: itemOf,
			single: (context, i) => itemHandlers.create!.call(context, i) as Promise<object>,
		},
		upsert: {
			resource: 'items',
			ownKey: true,
			build: async (context, i) => ({ op: 'upsert', ...(await createBodyAt(context, i)) }) as IDataObject,
			output: (result) => ({
				...itemOf(result),
				[UPSERT_RESULT_FIELD]: (result as ItemBatchResult).upsert ?? upsertResultOf(result.status, undefined),
			}),
			single: (context, i) => itemHandlers.upsert!.call(context, i) as Promise<object>,
		},
		update: {
			resource: 'items',
			ownKey: false,
			build: async (context, i) => {
				const { itemId, body } = await updateAt(context, i);
				return { op: 'update', item_id: itemId, ...body } as IDataObject;
			},
			output: itemOf,
			single: (context, i) => itemHandlers.update!.call(context, i) as Promise<object>,
		},
	},
	task: {
		create: {
			resource: 'tasks',
			ownKey: true,
			build: async (context, i) => ({ op: 'create', ...taskCreateBodyAt(context, i) }) as IDataObject,
			output: taskOf,
			single: (context, i) => taskHandlers.create!.call(context, i) as Promise<object>,
		},
		update: {
			resource: 'tasks',
			ownKey: false,
			build: async (context, i) => {
				const { taskId, body } = taskUpdateAt(context, i);
				return { op: 'update', task_id: taskId, ...body } as IDataObject;
			},
			output: taskOf,
			single: (context, i) => taskHandlers.update!.call(context, i) as Promise<object>,
		},
	},
};

/** An error thrown by an operation as a node error with the item index (anything else is wrapped). */
export function asNodeError(context: IExecuteFunctions, error: unknown, itemIndex: number): NodeApiError | NodeOperationError {
	if (error instanceof NodeApiError || error instanceof NodeOperationError) return error;
	return new NodeOperationError(context.getNode(), error as Error, { itemIndex });
}

/** Runs `single` for the input item and records its outcome. */
async function runSingle(context: IExecuteFunctions, spec: BatchableOperation, itemIndex: number, outcomes: Outcome[]): Promise<void> {
	try {
		outcomes[itemIndex] = { ok: true, json: (await spec.single(context, itemIndex)) as IDataObject };
	} catch (error) {
		outcomes[itemIndex] = { ok: false, error: asNodeError(context, error, itemIndex) };
	}
}

/**
 * Sends one batch and records each result as its input item's outcome (a failure of the whole request fails every
 * item of the batch). `operation` names the operation for the key (e.g. `item:create`).
 */
async function sendBatch(
	context: IExecuteFunctions,
	spec: BatchableOperation,
	operation: string,
	indexes: number[],
	operations: IDataObject[],
	outcomes: Outcome[],
): Promise<void> {
	const first = indexes[0]!;
	const key = derivedKey(context, `${operation}:batch:${indexes.join(',')}`, first);
	let results: BatchResult[];
	let requestId: string | undefined;
	try {
		const response = await apiRequest<{ results?: BatchResult[] }>(context, {
			method: 'POST',
			url: apiPath(spec.resource, 'batch'),
			body: { operations } as unknown as IDataObject,
			headers: { [IDEMPOTENCY_KEY_HEADER]: key },
			itemIndex: first,
		});
		results = Array.isArray(response.body?.results) ? response.body.results : [];
		requestId = response.headers[REQUEST_ID_HEADER];
		if (results.length !== operations.length) {
			throw new NodeApiError(context.getNode(), { body: JSON.stringify(response.body ?? null).slice(0, 500) }, {
				message: `Stageline answered the batch of ${operations.length} operations with ${results.length} results.`,
				itemIndex: first,
			});
		}
	} catch (error) {
		if (error instanceof NodeApiError && (error.httpCode === '404' || error.httpCode === '405')) {
			// a Stageline without batch endpoints: the same operations one request each
			for (const index of indexes) await runSingle(context, spec, index, outcomes);
			return;
		}
		for (const index of indexes) outcomes[index] = { ok: false, error: asNodeError(context, error, index) };
		return;
	}
	results.forEach((result, position) => {
		const index = indexes[position]!;
		outcomes[index] =
			result.status < 400
				? { ok: true, json: spec.output(result) }
				: { ok: false, error: problemError(context, result.status, result.problem, index, { requestId }) };
	});
}

/**
 * Runs `spec` for input items 0..count-1 in batches (see the module comment).
 * @param operation e.g. `item:create` (part of each batch's derived key).
 * @param stopAtFailure true without Continue On Fail: no batch is sent after one that holds a failure (the outcomes
 *   array then ends early, after the first failure).
 * @returns each input item's outcome, by input index.
 */
export async function runBatched(
	context: IExecuteFunctions,
	spec: BatchableOperation,
	operation: string,
	count: number,
	stopAtFailure: boolean,
): Promise<Outcome[]> {
	const outcomes: Outcome[] = [];
	let indexes: number[] = [];
	let operations: IDataObject[] = [];
	let chars = 0;
	let failed = false;
	const settle = async (send: () => Promise<void>) => {
		await send();
		failed = stopAtFailure && outcomes.some((o) => o !== undefined && !o.ok);
	};
	const flush = async () => {
		if (operations.length > 0) {
			const batch = { indexes, operations };
			await settle(() => sendBatch(context, spec, operation, batch.indexes, batch.operations, outcomes));
		}
		indexes = [];
		operations = [];
		chars = 0;
	};
	for (let itemIndex = 0; itemIndex < count && !failed; itemIndex++) {
		if (spec.ownKey && givenIdempotencyKey(context, itemIndex) !== '') {
			await flush();
			if (!failed) await settle(() => runSingle(context, spec, itemIndex, outcomes));
			continue;
		}
		let built: IDataObject;
		try {
			built = await spec.build(context, itemIndex);
		} catch (error) {
			outcomes[itemIndex] = { ok: false, error: asNodeError(context, error, itemIndex) };
			if (stopAtFailure) break; // the batch built so far is still sent (the items before the failure run, as in single mode)
			continue;
		}
		const size = JSON.stringify(built).length + 1;
		if (operations.length >= BATCH_MAX_OPERATIONS || (operations.length > 0 && chars + size > BATCH_MAX_BODY_CHARS)) await flush();
		if (failed) break;
		indexes.push(itemIndex);
		operations.push(built);
		chars += size;
	}
	await flush();
	return outcomes;
}
