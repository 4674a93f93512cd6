/**
 * Node `Stageline Polling Trigger` (type `stagelinePollingTrigger`, issue 31 item 5): starts a workflow with the
 * events Stageline recorded since the last poll, read from the events feed (CONTRACT "Events feed"), for n8n
 * instances Stageline cannot reach with a webhook (the Stageline Trigger needs a public URL). A separate node, as
 * n8n's own nodes do (a node is a webhook trigger or a polling trigger; `polling: true` adds "Poll Times" to every
 * mode of a node): the Stageline Trigger stays exactly as it was. Same Events and Pipeline choices as the Stageline
 * Trigger; the poll itself is feed.ts.
 */
import {
	NodeConnectionTypes,
	type INodeExecutionData,
	type INodeType,
	type INodeTypeDescription,
	type IPollFunctions,
} from 'n8n-workflow';
import { eventsProperty, pipelineFilterProperty } from '../StagelineTrigger/events';
import { getPipelineFilter } from '../StagelineTrigger/pipeline-filter';
import { pollFeed } from './feed';
import { AUTHENTICATION_PROPERTY, NODE_CREDENTIALS } from '../shared/authentication';

export class StagelinePollingTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Stageline Polling Trigger',
		name: 'stagelinePollingTrigger',
		icon: { light: 'file:stageline.svg', dark: 'file:stageline.dark.svg' },
		group: ['trigger'],
		version: 1,
		subtitle: '={{$parameter["events"].join(", ")}}',
		description: 'Starts the workflow with the Stageline events since the last poll (no public URL needed)',
		defaults: { name: 'Stageline Polling Trigger' },
		polling: true,
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		credentials: NODE_CREDENTIALS,
		properties: [
			AUTHENTICATION_PROPERTY,
			eventsProperty('The events that start the workflow'),
			pipelineFilterProperty(''),
			{
				displayName:
					'Each poll starts one execution with every new event, oldest first (up to 1,000; the rest on the next poll). On activation the trigger starts from the newest event. If n8n was off longer than Stageline keeps events (30 days by default), the trigger emits an item with event "events_missed" and goes on with new events.',
				name: 'notice',
				type: 'notice',
				default: '',
			},
		],
	};

	methods = {
		loadOptions: { getPipelineFilter },
	};

	async poll(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
		return pollFeed.call(this);
	}
}
