/**
 * The Stageline Trigger's fields against the contract (@stageline/shared): its events are exactly EVENT_NAMES, and
 * the header names it reads are the contract's.
 */
import { EVENT_NAMES, WEBHOOK_EVENT_HEADER, WEBHOOK_ID_HEADER, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER } from '@stageline/shared';
import * as signature from '../../n8n/nodes/StagelineTrigger/signature';
import { StagelineTrigger, TRIGGER_EVENTS } from '../../n8n/nodes/StagelineTrigger/StagelineTrigger.node';

it('offers exactly the contract events, in its order', () => {
	expect(TRIGGER_EVENTS.map((e) => e.value)).toEqual([...EVENT_NAMES]);
	const events = new StagelineTrigger().description.properties.find((p) => p.name === 'events');
	expect(events?.options).toEqual(TRIGGER_EVENTS);
});

it('reads the contract header names', () => {
	expect([signature.WEBHOOK_ID_HEADER, signature.WEBHOOK_TIMESTAMP_HEADER, signature.WEBHOOK_SIGNATURE_HEADER, signature.WEBHOOK_EVENT_HEADER]).toEqual([
		WEBHOOK_ID_HEADER,
		WEBHOOK_TIMESTAMP_HEADER,
		WEBHOOK_SIGNATURE_HEADER,
		WEBHOOK_EVENT_HEADER,
	]);
});
