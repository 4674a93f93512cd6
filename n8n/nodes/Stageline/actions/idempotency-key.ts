/** Creates with the Idempotency-Key of this node and input item (nodes/shared/idempotency.ts). */
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { deriveIdempotencyKey } from '../../shared/idempotency';
import { apiJson, IDEMPOTENCY_KEY_HEADER } from '../../shared/transport';

/**
 * The key for `operation` (e.g. `item:create`) of the input item at `itemIndex`, from the execution id, workflow id,
 * node id and item index: Retry On Fail sends the same key again.
 */
export function idempotencyKeyFor(context: IExecuteFunctions, operation: string, itemIndex: number): string {
	const node = context.getNode();
	return deriveIdempotencyKey({
		executionId: context.getExecutionId(),
		workflowId: context.getWorkflow().id,
		nodeId: node.id ?? node.name,
		operation,
		itemIndex,
	});
}

/**
 * POST a create body to `url` with the Idempotency-Key of `operation` for the input item at `itemIndex`; a replayed
 * answer (`Idempotent-Replayed: true`) is returned like the first one, so a retry outputs the same resource.
 * @returns the created resource (201) or the replay of the first answer.
 * @throws as `apiRequest` (transport.ts).
 */
export function createWithKey<T>(context: IExecuteFunctions, url: string, body: object, operation: string, itemIndex: number): Promise<T> {
	return apiJson<T>(context, {
		method: 'POST',
		url,
		body: body as IDataObject,
		headers: { [IDEMPOTENCY_KEY_HEADER]: idempotencyKeyFor(context, operation, itemIndex) },
		itemIndex,
	});
}
