import { TASK_PRIORITIES, TASK_TYPES } from '@stageline/shared';
import { perform as createTaskPerform } from '../src/creates/create-task';
import { perform as updateTaskPerform } from '../src/creates/update-task';
import { App, appTester, authData, task, thrown } from './helpers/app';
import { api, useNock } from './helpers/nock';

useNock();

const createTask = App.creates.create_task.operation;
const updateTask = App.creates.update_task.operation;

type Field = { key: string; type?: string; required?: boolean; choices?: { value: string }[] };

describe('Create Task', () => {
  test('form: every task write field of the spec, priority and type offering the allowed values, the idempotency key last', () => {
    const fields = createTask.inputFields as Field[];
    expect(fields.map((f) => f.key)).toEqual([
      'title',
      'due_at',
      'assigned_to',
      'description',
      'priority',
      'task_type',
      'item_id',
      'duration_minutes',
      'reminder_minutes',
      'notes',
      'is_completed',
      'idempotency_key',
    ]);
    expect(fields.filter((f) => f.required).map((f) => f.key)).toEqual(['title', 'due_at', 'assigned_to']);
    expect(fields.find((f) => f.key === 'priority')!.choices!.map((c) => c.value)).toEqual([...TASK_PRIORITIES]);
    expect(fields.find((f) => f.key === 'task_type')!.choices!.map((c) => c.value)).toEqual([...TASK_TYPES]);
    expect(Object.fromEntries(fields.map((f) => [f.key, f.type]))).toMatchObject({
      due_at: 'datetime',
      duration_minutes: 'integer',
      reminder_minutes: 'integer',
      is_completed: 'boolean',
    });
  });

  test('Zapier strings are coerced: whole minutes, yes/no, labels of choices, dates; blanks are not sent', async () => {
    const created = task({ task_id: 'tsk-5', priority: 'high', task_type: 'follow_up', duration_minutes: 30, reminder_minutes: 15 });
    api()
      .post('/v1/ext/tasks', {
        title: 'Call Ada',
        due_at: '2026-03-05T00:00:00.000Z',
        assigned_to: 'maria',
        priority: 'high',
        task_type: 'follow_up',
        item_id: 'itm-1',
        duration_minutes: 30,
        reminder_minutes: 15,
        is_completed: true,
      })
      .reply(201, created);
    const result = await appTester(createTaskPerform, {
      authData,
      inputData: {
        title: 'Call Ada',
        due_at: '2026-03-05',
        assigned_to: ' maria ',
        description: '',
        priority: 'High',
        task_type: 'Follow up',
        item_id: 'itm-1',
        duration_minutes: '30',
        reminder_minutes: 15,
        notes: '   ',
        is_completed: 'yes',
      },
    });
    expect(result).toEqual({ id: 'tsk-5', ...created });
  });

  test('missing required fields are listed with the contract messages, before calling Stageline', async () => {
    const error = await thrown(appTester(createTaskPerform, { authData, inputData: { title: 'Call Ada' } }));
    expect(error).toMatchObject({ code: 'InvalidData', status: 400 });
    expect(error.message).toContain('- due_at is required.');
    expect(error.message).toContain('- assigned_to is required.');
  });

  test('an unknown priority lists the allowed values', async () => {
    const error = await thrown(
      appTester(createTaskPerform, {
        authData,
        inputData: { title: 'T', due_at: '2026-03-05T10:00:00Z', assigned_to: 'm', priority: 'critical' },
      }),
    );
    expect(error.message).toContain('priority must be one of: none, low, medium, high, urgent.');
  });

  test('minutes that are not whole numbers are refused', async () => {
    const error = await thrown(
      appTester(createTaskPerform, {
        authData,
        inputData: { title: 'T', due_at: '2026-03-05T10:00:00Z', assigned_to: 'm', duration_minutes: 'half an hour' },
      }),
    );
    expect(error.message).toMatch(/Duration \(Minutes\) must be a number/);
  });
});

describe('Update Task', () => {
  test('sends only the provided fields: completing a task is one field', async () => {
    const done = task({ is_completed: true, completed_at: '2026-03-06T08:00:00.000Z' });
    api().patch('/v1/ext/tasks/tsk-1', { is_completed: true }).reply(200, done);
    const result = await appTester(updateTaskPerform, {
      authData,
      inputData: { task_id: 'tsk-1', title: '', is_completed: 'true', priority: '' },
    });
    expect(result).toEqual({ id: 'tsk-1', ...done });
  });

  test('"no" reopens a task and a new due time keeps its time zone', async () => {
    api().patch('/v1/ext/tasks/tsk-1', { due_at: '2026-03-07T09:00:00+01:00', is_completed: false }).reply(200, task());
    await appTester(updateTaskPerform, {
      authData,
      inputData: { task_id: 'tsk-1', due_at: '2026-03-07T09:00:00+01:00', is_completed: 'no' },
    });
  });

  test('form: the task id is the only required field', () => {
    const fields = updateTask.inputFields as Field[];
    expect(fields[0]!.key).toBe('task_id');
    expect(fields.filter((f) => f.required).map((f) => f.key)).toEqual(['task_id']);
  });

  test('nothing to change is refused before calling Stageline', async () => {
    const error = await thrown(appTester(updateTaskPerform, { authData, inputData: { task_id: 'tsk-1', notes: '' } }));
    expect(error.message).toContain('Provide at least one field to change.');
  });
});
