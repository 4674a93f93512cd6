/** Creates with the Idempotency-Key of this node and input item (nodes/shared/idempotency.ts). */
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { deriveIdempotencyKey } from '../../shared/idempotency';
import { apiRequest, IDEMPOTENCY_KEY_HEADER, type ApiResponse } from '../../shared/transport';

/**
 * The key for `operation` (e.g. `item:create`) of the input item at `itemIndex`: the Additional Field
 * "Idempotency Key" when set (so a retry from the executions list, a new execution, can resend the first key), else
 * derived from the execution id, workflow id, node id, the node's run index and the item index: Retry On Fail sends
 * the same key again, a second run of the node in a loop sends new ones.
 */
export function idempotencyKeyFor(context: IExecuteFunctions, operation: string, itemIndex: number): string {
	const given = givenIdempotencyKey(context, itemIndex);
	if (given !== '') return given;
	return derivedKey(context, operation, itemIndex);
}

/** The Additional Field "Idempotency Key" of the input item at `itemIndex`, trimmed ('' when not set). */
export function givenIdempotencyKey(context: IExecuteFunctions, itemIndex: number): string {
	const additional = context.getNodeParameter('additionalFields', itemIndex, {}) as IDataObject;
	return typeof additional.idempotencyKey === 'string' ? additional.idempotencyKey.trim() : '';
}

/**
 * The key derived from the execution id, workflow id, node id, the node's run index, `operation` and `itemIndex`
 * (nodes/shared/idempotency.ts): the same for a Retry On Fail of this run of the node, new for another run.
 */
export function derivedKey(context: IExecuteFunctions, operation: string, itemIndex: number): string {
	const node = context.getNode();
	return deriveIdempotencyKey({
		executionId: context.getExecutionId(),
		workflowId: context.getWorkflow().id,
		nodeId: node.id ?? node.name,
		operation,
		runIndex: context.getWorkflowDataProxy(itemIndex).$runIndex,
		itemIndex,
	});
}

/**
 * POST a create body to `url` with the Idempotency-Key of `operation` for the input item at `itemIndex`; a replayed
 * answer (`Idempotent-Replayed: true`) is returned like the first one, so a retry outputs the same resource.
 * @returns the created resource (201) or the replay of the first answer.
 * @throws as `apiRequest` (transport.ts).
 */
export async function createWithKey<T>(context: IExecuteFunctions, url: string, body: object, operation: string, itemIndex: number): Promise<T> {
	return (await postWithKey<T>(context, url, body, operation, itemIndex)).body;
}

/** As `createWithKey`, with the whole response (status and headers, e.g. an upsert's `Stageline-Upsert`). */
export function postWithKey<T>(context: IExecuteFunctions, url: string, body: object, operation: string, itemIndex: number): Promise<ApiResponse<T>> {
	return apiRequest<T>(context, {
		method: 'POST',
		url,
		body: body as IDataObject,
		headers: { [IDEMPOTENCY_KEY_HEADER]: idempotencyKeyFor(context, operation, itemIndex) },
		itemIndex,
	});
}
