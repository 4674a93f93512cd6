/** The shape of the node's operation handlers. */
import type { IExecuteFunctions } from 'n8n-workflow';

/**
 * One operation for one input item: reads its parameters at `itemIndex`, calls the API, returns one output object
 * or a list (one output item each): JSON objects as the API returned them (Item, Task, Pipeline...).
 * @throws NodeApiError / NodeOperationError (the node turns them into per-item errors under Continue On Fail).
 */
export type OperationHandler = (this: IExecuteFunctions, itemIndex: number) => Promise<object | object[]>;

/** Handlers of one resource by operation name. */
export type OperationHandlers = Record<string, OperationHandler>;
