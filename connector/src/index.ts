/**
 * The Stageline Zapier app: registers authentication, middleware and every operation (one per file under
 * triggers/, creates/, searches/). Compiled to dist/ as CommonJS; the root index.js re-exports the default.
 */
import { defineApp, version as platformVersion } from 'zapier-platform-core';
import authentication from './authentication';
import createItem from './creates/create-item';
import createNote from './creates/create-note';
import createTask from './creates/create-task';
import deleteItem from './creates/delete-item';
import updateItem from './creates/update-item';
import updateNote from './creates/update-note';
import updateTask from './creates/update-task';
import upsertItem from './creates/upsert-item';
import { addServerAndApiKey, explainErrorResponses } from './middleware';
import findDuplicateItems from './searches/find-duplicate-items';
import findItem from './searches/find-item';
import findTask from './searches/find-task';
import itemCreated from './triggers/item-created';
import itemDeleted from './triggers/item-deleted';
import itemStageChanged from './triggers/item-stage-changed';
import itemList from './triggers/item-list';
import itemUpdated from './triggers/item-updated';
import noteCreated from './triggers/note-created';
import noteList from './triggers/note-list';
import pipelineList from './triggers/pipeline-list';
import stageList from './triggers/stage-list';
import statusList from './triggers/status-list';
import taskCompleted from './triggers/task-completed';
import taskCreated from './triggers/task-created';
import taskList from './triggers/task-list';
import taskUpdated from './triggers/task-updated';
import userList from './triggers/user-list';

const { version } = require('../package.json') as { version: string };

export default defineApp({
  version,
  platformVersion,
  // Zapier removes empty strings, nulls and empty lists or objects from inputData before perform (integration
  // check D028); the coercion of fields/coerce.ts also treats blanks as "not provided".
  flags: { cleanInputData: true },
  authentication,
  beforeRequest: [addServerAndApiKey],
  afterResponse: [explainErrorResponses],
  triggers: {
    [itemCreated.key]: itemCreated,
    [itemUpdated.key]: itemUpdated,
    [itemStageChanged.key]: itemStageChanged,
    [itemDeleted.key]: itemDeleted,
    [taskCreated.key]: taskCreated,
    [taskUpdated.key]: taskUpdated,
    [taskCompleted.key]: taskCompleted,
    [noteCreated.key]: noteCreated,
    [pipelineList.key]: pipelineList,
    [stageList.key]: stageList,
    [statusList.key]: statusList,
    [itemList.key]: itemList,
    [taskList.key]: taskList,
    [noteList.key]: noteList,
    [userList.key]: userList,
  },
  creates: {
    [createItem.key]: createItem,
    [updateItem.key]: updateItem,
    [upsertItem.key]: upsertItem,
    [deleteItem.key]: deleteItem,
    [createTask.key]: createTask,
    [updateTask.key]: updateTask,
    [createNote.key]: createNote,
    [updateNote.key]: updateNote,
  },
  searches: {
    [findItem.key]: findItem,
    [findTask.key]: findTask,
    [findDuplicateItems.key]: findDuplicateItems,
  },
  searchOrCreates: {
    [findItem.key]: {
      key: findItem.key,
      display: {
        label: 'Find or Create Item',
        description: 'Finds an item by ID, short ID or name, or creates it when there is none; can update the item it finds.',
      },
      search: findItem.key,
      create: createItem.key,
      // "Update if found": Zapier offers to run Update Item on the found item (its id fills Update Item's Item).
      update: updateItem.key,
      updateInputFromSearchOutput: { item_id: 'id' },
    },
    [findDuplicateItems.key]: {
      key: findDuplicateItems.key,
      display: {
        label: 'Find Duplicate or Create Item',
        description: 'Finds a duplicate of the item in its pipeline, or creates the item when there is none.',
      },
      search: findDuplicateItems.key,
      create: createItem.key,
    },
  },
});
