/**
 * The `Idempotency-Key` of a create (CONTRACT "Idempotency"; issue 18): derived from the execution id, the workflow,
 * the node, the node's run index and the input item's index, so n8n's Retry On Fail (which tries the same run of
 * the node again) sends the same key and Stageline answers with the first response instead of creating twice,
 * while a second run of the node in one execution (a Loop Over Items batch) gets its own keys. A new execution
 * (including "Retry" of a failed execution from the list) gets new keys: it is a new run.
 */
import { createHash } from 'node:crypto';

/** Every key starts with this (the rest is 64 lowercase hex digits: 68 printable ASCII characters, within 1..255). */
export const IDEMPOTENCY_KEY_PREFIX = 'n8n-';

/** Version of the derivation; bump it if the hashed parts change. */
const DERIVATION_VERSION = 2;

/** What a key is derived from. */
export interface IdempotencyKeyParts {
	executionId: string;
	workflowId: string | undefined;
	/** The node's id (stable when the node is renamed). */
	nodeId: string;
	/** The operation, e.g. `item:create`, so two operations of one node never share a key. */
	operation: string;
	/** The node's run index in the execution (`$runIndex`: 0, then 1, 2... when a loop runs it again). */
	runIndex: number;
	itemIndex: number;
}

/** `n8n-` + hex SHA-256 of the parts as JSON in a fixed order. Pure and deterministic. */
export function deriveIdempotencyKey(parts: IdempotencyKeyParts): string {
	const material = JSON.stringify([
		DERIVATION_VERSION,
		parts.executionId,
		parts.workflowId ?? null,
		parts.nodeId,
		parts.operation,
		parts.runIndex,
		parts.itemIndex,
	]);
	return IDEMPOTENCY_KEY_PREFIX + createHash('sha256').update(material, 'utf8').digest('hex');
}
