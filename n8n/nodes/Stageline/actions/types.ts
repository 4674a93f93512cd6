/** The shape of the node's operation handlers. */
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

/**
 * One operation for one input item: reads its parameters at `itemIndex`, calls the API, returns one output object
 * or a list (one output item each).
 * @throws NodeApiError / NodeOperationError (the node turns them into per-item errors under Continue On Fail).
 */
export type OperationHandler = (this: IExecuteFunctions, itemIndex: number) => Promise<IDataObject | IDataObject[]>;

/** Handlers of one resource by operation name. */
export type OperationHandlers = Record<string, OperationHandler>;
