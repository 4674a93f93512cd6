/**
 * Node `Stageline Trigger` (type `stagelineTrigger`, issue 18): starts a workflow when Stageline reports one of the
 * chosen events (spec "Events"; CONTRACT "Events and deliveries"). Activation subscribes one REST hook per event, with
 * the node's Pipeline / Stage / changed-field options as its server-side filter (filter.ts), deactivation deletes them, a restart finds them (subscriptions.ts); every delivery's signature is checked before a
 * run starts (delivery.ts, signature.ts).
 */
import {
	NodeConnectionTypes,
	type IHookFunctions,
	type INodeType,
	type INodeTypeDescription,
	type IWebhookFunctions,
	type IWebhookResponseData,
} from 'n8n-workflow';
import { handleDelivery } from './delivery';
import { eventsProperty, pipelineFilterProperty, TRIGGER_EVENTS } from './events';
import { getChangedFieldFilter, getStageFilter } from './filter-options';
import { getPipelineFilter } from './pipeline-filter';
import { checkExists, create, deleteSubscriptions } from './subscriptions';
import { AUTHENTICATION_PROPERTY, NODE_CREDENTIALS } from '../shared/authentication';

/** The ten events, shared with the Stageline Polling Trigger (events.ts). */
export { TRIGGER_EVENTS };

export class StagelineTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Stageline Trigger',
		name: 'stagelineTrigger',
		icon: { light: 'file:stageline.svg', dark: 'file:stageline.dark.svg' },
		group: ['trigger'],
		version: 1,
		subtitle: '={{$parameter["events"].join(", ")}}',
		description: 'Starts the workflow when items, tasks or notes change in Stageline',
		defaults: { name: 'Stageline Trigger' },
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		credentials: NODE_CREDENTIALS,
		webhooks: [{ name: 'default', httpMethod: 'POST', responseMode: 'onReceived', path: 'webhook' }],
		properties: [
			AUTHENTICATION_PROPERTY,
			eventsProperty('The events that start the workflow; each becomes one Stageline webhook subscription'),
			pipelineFilterProperty('Stageline filters before sending.'),
			{
				displayName: 'Stage Name or ID',
				name: 'stageId',
				type: 'options',
				typeOptions: { loadOptionsMethod: 'getStageFilter', loadOptionsDependsOn: ['pipelineId'] },
				default: '',
				description:
					'Only item events of items in this stage (after the change) start the workflow; needs the pipeline. Any Stage for no filter. Choose from the list, or specify an ID using an <a href="https://docs.n8n.io/code/expressions/">expression</a>.',
			},
			{
				displayName: 'Only When These Fields Change (Names or IDs)',
				name: 'changedFields',
				type: 'multiOptions',
				typeOptions: { loadOptionsMethod: 'getChangedFieldFilter', loadOptionsDependsOn: ['events', 'pipelineId'] },
				default: [],
				description:
					'Item Updated, Task Updated and Note Updated start the workflow only when one of these fields changed (item fields for items, task fields for tasks, note fields for notes); empty for every change. Choose from the list, or specify IDs using an <a href="https://docs.n8n.io/code/expressions/">expression</a>.',
			},
		],
	};

	methods = {
		loadOptions: { getPipelineFilter, getStageFilter, getChangedFieldFilter },
	};

	webhookMethods = {
		default: {
			async checkExists(this: IHookFunctions): Promise<boolean> {
				return checkExists.call(this);
			},
			async create(this: IHookFunctions): Promise<boolean> {
				return create.call(this);
			},
			async delete(this: IHookFunctions): Promise<boolean> {
				return deleteSubscriptions.call(this);
			},
		},
	};

	async webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
		return handleDelivery.call(this);
	}
}
