import { createProblem } from '@stageline/shared';
import { describeProblem, formatFieldErrors, requestIdOf, withRequestId } from './problem-messages';

describe('describeProblem', () => {
  test('uses the detail of a partial problem body (no code) and falls back to http_<status>', () => {
    const described = describeProblem(404, { detail: 'No such pipeline' });
    expect(described).toMatchObject({ code: 'http_404', status: 404 });
    expect(described.message).toContain('No such pipeline.');
  });

  test('a 409 without current_version still explains the conflict', () => {
    expect(describeProblem(409, {}).message).toMatch(/Stageline now has a newer version/);
  });

  test('a 422 for an unknown event lists the valid events', () => {
    const body = createProblem('invalid_reference', 'Unknown event "item.deleted".', { valid_events: ['item.created', 'item.updated'] });
    expect(describeProblem(422, body).message).toContain('Valid events: item.created, item.updated.');
  });

  test('field errors: the path is left out when the message already names it, repeats are dropped', () => {
    expect(
      formatFieldErrors([
        { path: 'title', message: 'title is required.' },
        { path: 'title', message: 'title is required.' },
        { path: 'stage_id', message: 'Unknown stage.' },
      ]),
    ).toBe('- title is required.\n- stage_id: Unknown stage.');
  });
});

describe('request ids', () => {
  test("requestIdOf: the body's request_id, else the header; nothing that is not an id to paste", () => {
    expect(requestIdOf({ request_id: 'req_a' }, 'req_b')).toBe('req_a');
    expect(requestIdOf({}, 'req_b')).toBe('req_b');
    expect(requestIdOf(undefined, 'req_b')).toBe('req_b');
    expect(requestIdOf({ request_id: 7 }, null)).toBeUndefined();
    expect(requestIdOf({ request_id: 'two words' }, 'x'.repeat(101))).toBeUndefined();
  });

  test('withRequestId: after a sentence with a space, after a field list on a line of its own, nothing without an id', () => {
    expect(withRequestId('Stageline could not find it.', 'req_a')).toBe('Stageline could not find it. (request req_a)');
    expect(withRequestId('Not valid.\n- name: Required', 'req_a')).toBe('Not valid.\n- name: Required\n(request req_a)');
    expect(withRequestId('Unchanged.', undefined)).toBe('Unchanged.');
  });

  test('describeProblem: the header (context) serves when the body has no request_id', () => {
    expect(describeProblem(404, { detail: 'Gone' }, '', { requestId: 'req_h' }).message).toMatch(/ \(request req_h\)$/);
    expect(describeProblem(404, { detail: 'Gone' }).message).not.toMatch(/request/);
  });
});
