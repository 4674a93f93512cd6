/** The guard of Item → Update and Task → Update against a request that changes nothing. */
import { NodeOperationError, type IExecuteFunctions } from 'n8n-workflow';

/**
 * Refuses an update that changes nothing (no Update Field and no custom field; Version alone is a precondition).
 * @throws NodeOperationError "Add at least one Update Field" with the item index.
 */
export function requireChanges(context: IExecuteFunctions, body: object, itemIndex: number): void {
	if (Object.keys(body).some((key) => key !== 'version')) return;
	throw new NodeOperationError(context.getNode(), 'Add at least one Update Field (or a custom field) to change.', { itemIndex });
}
