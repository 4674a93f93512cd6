/** The Idempotency-Key of a create made by this node for one input item (nodes/shared/idempotency.ts). */
import type { IExecuteFunctions } from 'n8n-workflow';
import { deriveIdempotencyKey } from '../../shared/idempotency';

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
