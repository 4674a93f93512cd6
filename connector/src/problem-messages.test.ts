import { createProblem } from '@stageline/shared';
import { describeProblem, formatFieldErrors } from './problem-messages';

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
