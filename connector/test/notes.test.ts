/**
 * Notes and people in the connector (issue 30; CONTRACT "Notes", "People"), against a nock'ed server: New Note
 * (REST hook on note.created with the Pipeline filter, samples), Create Note
 * (item picker, Markdown body, pinned, Idempotency-Key), Update Note (note picker, only the filled-in fields,
 * version), the note picker (note_list) and the people picker (user_list) behind "Assigned To" on Create Task,
 * Update Task and Find Task, where a custom value is still accepted.
 */
import { NOTE_BODY_MAX, NoteSchema, createProblem, isIdempotencyKey } from '@stageline/shared';
import type nock from 'nock';
import { perform as createNote } from '../src/creates/create-note';
import { perform as createTask } from '../src/creates/create-task';
import { perform as updateNote } from '../src/creates/update-note';
import { deriveIdempotencyKey } from '../src/idempotency';
import { perform as findTask } from '../src/searches/find-task';
import * as noteCreated from '../src/triggers/note-created';
import { NOTE_LABEL_MAX, listNoteChoices, noteExcerpt } from '../src/triggers/note-list';
import { FEED_SAMPLE_WINDOW } from '../src/triggers/rest-hook';
import { listTaskChoices } from '../src/triggers/task-list';
import { listUserChoices } from '../src/triggers/user-list';
import { App, SERVER, appTester, authData, cursorStore, feedEvents, note, runPage, task, thrown, user } from './helpers/app';
import { signedDelivery } from './helpers/deliveries';
import { api, useNock } from './helpers/nock';

useNock();

type Field = { key: string; label?: string; type?: string; required?: boolean; dynamic?: string; search?: string; altersDynamicFields?: boolean };

const PROBLEM_HEADERS = { 'content-type': 'application/problem+json' };

/** The static input fields of an operation (functions resolved with an empty step). */
async function formOf(inputFields: unknown): Promise<Field[]> {
  return (await appTester(inputFields as never, { authData, inputData: {} })) as Field[];
}

/** Mocks one POST /v1/ext/notes answering 201 with `answer`; resolves the body and Idempotency-Key it received. */
function expectNotePost(answer: unknown): Promise<{ body: unknown; key: string | undefined }> {
  return new Promise((resolve) => {
    (api().post('/v1/ext/notes') as nock.Interceptor).reply(function reply(_uri, body) {
      const value = this.req.headers['idempotency-key'];
      resolve({ body, key: Array.isArray(value) ? value[0] : value });
      return [201, answer];
    });
  });
}

describe('Create Note', () => {
  const operation = App.creates.create_note.operation;

  test('form: the item picker (required, with Find Item), a Markdown body (text, required), Pinned, the idempotency key last', async () => {
    const fields = await formOf(operation.inputFields);
    expect(fields.map((f) => f.key)).toEqual(['item_id', 'body', 'pinned', 'idempotency_key']);
    expect(fields.filter((f) => f.required).map((f) => f.key)).toEqual(['item_id', 'body']);
    expect(fields[0]).toMatchObject({ label: 'Item', dynamic: 'item_list.id.label', search: 'find_item.id' });
    expect(fields[1]).toMatchObject({ type: 'text' });
    expect(fields[2]).toMatchObject({ type: 'boolean' });
    expect(App.creates.create_note).toMatchObject({ noun: 'Note', display: { label: 'Create Note' } });
  });

  test('sends item, body as written (Markdown white space kept) and pinned (yes -> true) with an Idempotency-Key; output id = note_id', async () => {
    const markdown = '  indented code\n\n**bold** and a list:\n- one\n';
    const created = note({ note_id: 'nte-7', body: markdown, pinned: true });
    const sent = expectNotePost(created);
    const output = await appTester(createNote, { authData, inputData: { item_id: ' itm-1 ', body: markdown, pinned: 'yes' } });
    const { body, key } = await sent;
    expect(body).toEqual({ item_id: 'itm-1', body: markdown, pinned: true });
    expect(output).toEqual({ id: 'nte-7', ...created });
    expect(isIdempotencyKey(key)).toBe(true);
    expect(key).toBe(deriveIdempotencyKey({ action: 'create_note', body: { item_id: 'itm-1', body: markdown, pinned: true } }));
  });

  test('a retry with the same input sends the same key; another body or the override another one', async () => {
    const keyOf = async (inputData: Record<string, unknown>) => {
      const sent = expectNotePost(note());
      await appTester(createNote, { authData, inputData, meta: { zap: { id: '9' } } } as never);
      return (await sent).key;
    };
    const input = { item_id: 'itm-1', body: 'Called Ada.' };
    const first = await keyOf(input);
    expect(await keyOf({ ...input })).toBe(first);
    expect(await keyOf({ ...input, body: 'Called Ada again.' })).not.toBe(first);
    expect(await keyOf({ ...input, idempotency_key: 'row-17' })).not.toBe(first);
  });

  test('Pinned left empty is not sent (the server defaults to unpinned)', async () => {
    const sent = expectNotePost(note());
    await appTester(createNote, { authData, inputData: { item_id: 'itm-1', body: 'Hello', pinned: '' } });
    expect((await sent).body).toEqual({ item_id: 'itm-1', body: 'Hello' });
  });

  test('no item, a blank body, a body over 65,536 characters or a NUL are refused before calling Stageline', async () => {
    const noItem = await thrown(appTester(createNote, { authData, inputData: { body: 'Hello' } }));
    expect(noItem).toMatchObject({ code: 'InvalidData', status: 400 });
    expect(noItem.message).toContain('item_id is required.');
    const blank = await thrown(appTester(createNote, { authData, inputData: { item_id: 'itm-1', body: '  \n ' } }));
    expect(blank.message).toContain('body must not be empty.');
    const missing = await thrown(appTester(createNote, { authData, inputData: { item_id: 'itm-1' } }));
    expect(missing.message).toContain('body must not be empty.');
    const long = await thrown(appTester(createNote, { authData, inputData: { item_id: 'itm-1', body: 'x'.repeat(NOTE_BODY_MAX + 1) } }));
    expect(long.message).toContain(`body must be at most ${NOTE_BODY_MAX} characters.`);
    const nul = await thrown(appTester(createNote, { authData, inputData: { item_id: 'itm-1', body: 'a\u0000b' } }));
    expect(nul).toMatchObject({ code: 'InvalidData' });
    const pinned = await thrown(appTester(createNote, { authData, inputData: { item_id: 'itm-1', body: 'x', pinned: 'maybe' } }));
    expect(pinned.message).toContain('Pinned must be true or false');
  });

  test('a body of exactly 65,536 characters is sent', async () => {
    const sent = expectNotePost(note());
    await appTester(createNote, { authData, inputData: { item_id: 'itm-1', body: 'y'.repeat(NOTE_BODY_MAX) } });
    expect(((await sent).body as { body: string }).body).toHaveLength(NOTE_BODY_MAX);
  });

  test("an item of another company (422 invalid_reference) is the server's message, not a note", async () => {
    api()
      .post('/v1/ext/notes')
      .reply(422, createProblem('invalid_reference', 'item_id does not name an item of this company.'), PROBLEM_HEADERS);
    const error = await thrown(appTester(createNote, { authData, inputData: { item_id: 'itm-other', body: 'Hi' } }));
    expect(error.status).toBe(422);
    expect(error.message).toContain('item_id does not name an item of this company.');
  });
});

describe('Update Note', () => {
  const operation = App.creates.update_note.operation;

  test('form: an optional Item that narrows the required Note picker, Body, Pinned, Version', async () => {
    const fields = await formOf(operation.inputFields);
    expect(fields.map((f) => f.key)).toEqual(['item_id', 'note_id', 'body', 'pinned', 'version']);
    expect(fields.filter((f) => f.required).map((f) => f.key)).toEqual(['note_id']);
    expect(fields[0]).toMatchObject({ dynamic: 'item_list.id.label', altersDynamicFields: true });
    expect(fields[0]!.search).toBeUndefined();
    expect(fields[1]).toMatchObject({ label: 'Note', dynamic: 'note_list.id.label' });
    expect(fields[1]!.search).toBeUndefined(); // there is no Find Note
    expect(fields[4]).toMatchObject({ type: 'integer' });
  });

  test('sends only the filled-in fields, never the item; version makes it conditional', async () => {
    const unpinned = note({ pinned: false, version: 3 });
    api().patch('/v1/ext/notes/nte-1', { pinned: false }).reply(200, unpinned);
    expect(await appTester(updateNote, { authData, inputData: { item_id: 'itm-1', note_id: 'nte-1', body: '', pinned: 'no' } })).toEqual({
      id: 'nte-1',
      ...unpinned,
    });
    api().patch('/v1/ext/notes/nte-1', { body: 'New text', version: 2 }).reply(200, note({ body: 'New text', version: 3 }));
    await appTester(updateNote, { authData, inputData: { note_id: 'nte-1', body: 'New text', version: '2' } });
  });

  test('ids are percent-encoded in the path', async () => {
    api().patch('/v1/ext/notes/a%2Fb', { pinned: true }).reply(404, createProblem('not_found', 'Note "a/b" was not found.'), PROBLEM_HEADERS);
    const error = await thrown(appTester(updateNote, { authData, inputData: { note_id: 'a/b', pinned: true } }));
    expect(error.status).toBe(404);
  });

  test('nothing to change, or only a version, is refused before calling Stageline; no note is refused', async () => {
    const nothing = await thrown(appTester(updateNote, { authData, inputData: { note_id: 'nte-1', body: ' ' } }));
    expect(nothing.message).toContain('Provide at least one field to change.');
    const versionOnly = await thrown(appTester(updateNote, { authData, inputData: { note_id: 'nte-1', version: 2 } }));
    expect(versionOnly.message).toContain('Provide at least one field to change.');
    const noNote = await thrown(appTester(updateNote, { authData, inputData: { body: 'x' } }));
    expect(noNote.message).toContain('Note');
  });

  test('a version conflict (409) says the note changed and gives its current version', async () => {
    api()
      .patch('/v1/ext/notes/nte-1')
      .reply(409, { ...createProblem('version_conflict', 'The note was changed since version 1.'), current_version: 4 }, PROBLEM_HEADERS);
    const error = await thrown(appTester(updateNote, { authData, inputData: { note_id: 'nte-1', body: 'x', version: 1 } }));
    expect(error.status).toBe(409);
    expect(error.message).toContain('4');
  });
});

describe('note picker (note_list)', () => {
  test('is a hidden, paging trigger', () => {
    expect(App.triggers.note_list.display.hidden).toBe(true);
    expect(App.triggers.note_list.operation).toMatchObject({ type: 'polling', canPaginate: true });
  });

  test("lists notes labelled with their first line, pinned ones marked, of the step's item, and pages", async () => {
    const store = cursorStore();
    api()
      .get('/v1/ext/notes')
      .query({ limit: '100', item_id: 'itm-1' })
      .reply(200, [note({ note_id: 'nte-2', body: '\n\n  # Pricing  \nmore', pinned: true }), note()], {
        Link: `<${SERVER}/v1/ext/notes?limit=100&item_id=itm-1&cursor=n2>; rel="next"`,
      });
    const choices = await runPage(listNoteChoices, { authData, inputData: { item_id: 'itm-1' } }, 0, store);
    expect(choices.map((c) => [c.id, c.label])).toEqual([
      ['nte-2', '# Pricing (pinned)'],
      ['nte-1', 'Ada wants **annual billing**.'],
    ]);
    api().get('/v1/ext/notes').query({ limit: '100', item_id: 'itm-1', cursor: 'n2' }).reply(200, []);
    expect(await runPage(listNoteChoices, { authData, inputData: { item_id: 'itm-1' } }, 1, store)).toEqual([]);
    // a mapped item (unknown while editing) does not filter
    api().get('/v1/ext/notes').query({ limit: '100' }).reply(200, []);
    expect(await runPage(listNoteChoices, { authData, inputData: { item_id: '{{12__item_id}}' } }, 0, cursorStore())).toEqual([]);
  });

  test('long first lines are cut with an ellipsis, never inside a surrogate pair', () => {
    expect(noteExcerpt('a'.repeat(NOTE_LABEL_MAX))).toHaveLength(NOTE_LABEL_MAX);
    const cut = noteExcerpt('😀'.repeat(NOTE_LABEL_MAX + 5));
    expect(Array.from(cut)).toHaveLength(NOTE_LABEL_MAX);
    expect(cut.endsWith('😀…')).toBe(true);
    expect(noteExcerpt('   \n\t\n')).toBe('');
  });
});

describe('people picker (user_list) and "Assigned To"', () => {
  test('is a hidden, paging trigger over GET /v1/ext/users, labelled "Name (email)" or the email alone', async () => {
    expect(App.triggers.user_list.display.hidden).toBe(true);
    expect(App.triggers.user_list.operation).toMatchObject({ type: 'polling', canPaginate: true });
    const store = cursorStore();
    api()
      .get('/v1/ext/users')
      .query({ limit: '100' })
      .reply(200, [user(), user({ user_id: 'usr-2', name: null, email: 'ops@acme.example' }), user({ user_id: 'usr-3', name: '  ', email: 'x@acme.example' })], {
        Link: `<${SERVER}/v1/ext/users?limit=100&cursor=u2>; rel="next"`,
      });
    const choices = await runPage(listUserChoices, { authData }, 0, store);
    expect(choices).toEqual([
      { id: 'usr-1', label: 'Maria Lopez (maria@acme.example)', name: 'Maria Lopez', email: 'maria@acme.example' },
      { id: 'usr-2', label: 'ops@acme.example', name: null, email: 'ops@acme.example' },
      { id: 'usr-3', label: 'x@acme.example', name: '  ', email: 'x@acme.example' },
    ]);
    api().get('/v1/ext/users').query({ limit: '100', cursor: 'u2' }).reply(200, []);
    expect(await runPage(listUserChoices, { authData }, 1, store)).toEqual([]);
  });

  test('backs Assigned To of Create Task (required), Update Task and Find Task (optional)', async () => {
    const forms: [string, unknown, boolean][] = [
      ['create_task', App.creates.create_task.operation.inputFields, true],
      ['update_task', App.creates.update_task.operation.inputFields, false],
      ['find_task', App.searches.find_task.operation.inputFields, false],
    ];
    for (const [key, inputFields, required] of forms) {
      const field = (await formOf(inputFields)).find((f) => f.key === 'assigned_to');
      expect([key, field]).toEqual([key, expect.objectContaining({ label: 'Assigned To', type: 'string', dynamic: 'user_list.id.label', required })]);
      expect(field!.search).toBeUndefined();
    }
  });

  test('a chosen user sends its user_id; a custom value (any identifier) is still sent as typed, trimmed', async () => {
    const base = { title: 'Call Ada', due_at: '2026-03-05T15:00:00.000Z' };
    api().post('/v1/ext/tasks', { ...base, assigned_to: 'usr-1' }).reply(201, task({ assigned_to: 'usr-1' }));
    await appTester(createTask, { authData, inputData: { ...base, assigned_to: 'usr-1' } });
    api().post('/v1/ext/tasks', { ...base, assigned_to: 'someone@partner.example' }).reply(201, task({ assigned_to: 'someone@partner.example' }));
    await appTester(createTask, { authData, inputData: { ...base, assigned_to: ' someone@partner.example ' } });
  });

  test("the task picker names the assigned user (name, else email), else shows assigned_to as written", async () => {
    api()
      .get('/v1/ext/tasks')
      .query({ limit: '100' })
      .reply(200, [
        task({ task_id: 'tsk-3', assigned_to: 'usr-1', assignee: user() }),
        task({ task_id: 'tsk-2', assigned_to: 'usr-2', assignee: user({ user_id: 'usr-2', name: null, email: 'ops@acme.example' }) }),
        task({ task_id: 'tsk-1', assigned_to: 'someone@partner.example', assignee: null }),
      ]);
    const labels = (await runPage(listTaskChoices, { authData }, 0, cursorStore())).map((c) => c.label);
    expect(labels).toEqual([
      'Call Ada · due 2026-03-05 · Maria Lopez',
      'Call Ada · due 2026-03-05 · ops@acme.example',
      'Call Ada · due 2026-03-05 · someone@partner.example',
    ]);
  });

  test('Find Task filters by the chosen user or the custom identifier', async () => {
    api().get('/v1/ext/tasks').query({ assigned_to: 'usr-1', limit: '500' }).reply(200, [task({ assigned_to: 'usr-1' })]);
    const found = (await appTester(findTask, { authData, inputData: { title: 'call ada', assigned_to: 'usr-1' } })) as unknown[];
    expect(found).toHaveLength(1);
  });
});

describe('New Note (note_created)', () => {
  const TARGET_URL = 'https://hooks.zapier.com/hooks/standard/123/abc/';
  const subscription = {
    id: 'wh-n',
    target_url: TARGET_URL,
    event: 'note.created',
    created_at: '2026-03-01T09:00:00.000Z',
    disabled_at: null,
    disabled_reason: null,
    failing_since: null,
    next_attempt_at: null,
    secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  };

  test('inputs: an optional Pipeline only (no Stage, no field filter)', async () => {
    const fields = await formOf(App.triggers.note_created.operation.inputFields);
    expect(fields.map((f) => f.key)).toEqual(['pipeline_id']);
    expect(fields[0]).toMatchObject({ required: false, dynamic: 'pipeline_list.id.name' });
    expect((fields[0] as { helpText?: string }).helpText).toMatch(/notes on items of this pipeline/);
  });

  test('subscribes note.created, with the Pipeline as the server-side filter when chosen', async () => {
    api().post('/v1/ext/webhooks', { target_url: TARGET_URL, event: 'note.created', filter: { pipeline_id: 'pl-sales' } }).reply(201, { ...subscription, filter: { pipeline_id: 'pl-sales' } });
    const made = (await appTester(noteCreated.performSubscribe, { authData, targetUrl: TARGET_URL, inputData: { pipeline_id: 'pl-sales' } })) as { filter: unknown };
    expect(made.filter).toEqual({ pipeline_id: 'pl-sales' });
    api().post('/v1/ext/webhooks', { target_url: TARGET_URL, event: 'note.created' }).reply(201, { ...subscription, filter: null });
    await appTester(noteCreated.performSubscribe, { authData, targetUrl: TARGET_URL, inputData: {} });
  });

  test('a delivery becomes one run with id = note_id (the pipeline filter is the server\'s: a note names no pipeline)', async () => {
    const delivered = note({ note_id: 'nte-9' });
    expect(await appTester(noteCreated.perform, { authData, inputData: { pipeline_id: 'pl-sales' }, ...signedDelivery(delivered) })).toEqual([{ id: 'nte-9', ...delivered }]);
    // an item or a task posted to the hook is not a note
    expect(await appTester(noteCreated.perform, { authData, inputData: {}, ...signedDelivery(task()) })).toEqual([]);
  });

  test('samples: the newest note.created events of the feed, else the note sample', async () => {
    const query = { event: 'note.created', limit: String(FEED_SAMPLE_WINDOW) };
    api().get('/v1/ext/events').query(query).reply(200, feedEvents('note.created', [note({ note_id: 'nte-2' }), note()]));
    expect(((await appTester(noteCreated.performList, { authData, inputData: {} })) as { id: string }[]).map((n) => n.id)).toEqual(['nte-2', 'nte-1']);
    api().get('/v1/ext/events').query(query).reply(200, []);
    api().get('/v1/ext/webhooks/sample/notes').reply(200, note({ note_id: 'sample-note' }));
    expect(await appTester(noteCreated.performList, { authData, inputData: {} })).toEqual([{ id: 'sample-note', ...note({ note_id: 'sample-note' }) }]);
  });

  test('the static sample is a valid Note plus id; output fields are id and every Note field, labelled', () => {
    const { id, ...payload } = App.triggers.note_created.operation.sample as Record<string, unknown>;
    expect(NoteSchema.parse(payload)).toBeTruthy();
    expect(id).toBe(payload.note_id);
    const fields = App.triggers.note_created.operation.outputFields as { key: string; label: string }[];
    expect(fields.map((f) => f.key)).toEqual(['id', ...Object.keys(NoteSchema.shape)]);
    for (const field of fields) expect(field.label).toMatch(/^[A-Z]/);
  });
});
