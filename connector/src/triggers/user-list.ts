/**
 * Hidden trigger `user_list`: the people picker behind every "Assigned To" input (`dynamic: 'user_list.id.label'`):
 * Create Task, Update Task and Find Task. CONTRACT "People": GET /v1/ext/users (any valid key), the company's console
 * users `{ user_id, name, email }` sorted by name then email; Zapier pages through it with `canPaginate` over the
 * API's keyset cursor (client.ts `getPickerPage`). Each choice is labelled with the user's display name and email
 * ("Maria Lopez (maria@acme.example)"), or the email alone while the user has set no name; the value is the
 * `user_id`, which a task's `assigned_to` takes so that its `assignee` names the user. The dropdown still accepts a
 * custom value (Zapier lets users type or map any text into a dynamic dropdown): `assigned_to` keeps accepting any
 * identifier (CONTRACT "People", compatibility).
 */
import { defineTrigger, type Bundle, type ZObject } from 'zapier-platform-core';
import type { User } from '@stageline/shared';
import { apiPath, getPickerPage } from '../client';

/** One choice of the people picker. */
export interface UserChoice {
  /** The user id (what the dropdown puts into the field). */
  id: string;
  /** What the dropdown shows: name and email, or the email alone. */
  label: string;
  name: string | null;
  email: string;
}

/** A user as a picker choice. */
export function userChoice(user: User): UserChoice {
  const name = user.name?.trim() ? user.name.trim() : null;
  return { id: user.user_id, label: name === null ? user.email : `${name} (${user.email})`, name: user.name, email: user.email };
}

/** One page (bundle.meta.page) of the company's users, by name then email. */
export async function listUserChoices(z: ZObject, bundle: Bundle): Promise<UserChoice[]> {
  const users = await getPickerPage<User>(z, bundle, apiPath('users'));
  return users.map(userChoice);
}

export default defineTrigger({
  key: 'user_list',
  noun: 'User',
  display: {
    label: 'List Users',
    description: 'Lists the people of your company, by name, for the Assigned To dropdowns.',
    hidden: true,
  },
  operation: {
    type: 'polling',
    canPaginate: true,
    perform: listUserChoices,
    sample: {
      id: '8e2a4c6b-0d1f-4e3a-9b5c-7d9e1f3a5b7c',
      label: 'Maria Lopez (maria@acme.example)',
      name: 'Maria Lopez',
      email: 'maria@acme.example',
    },
    outputFields: [
      { key: 'id', label: 'User ID', type: 'string' },
      { key: 'label', label: 'Name and Email', type: 'string' },
      { key: 'name', label: 'Name', type: 'string' },
      { key: 'email', label: 'Email', type: 'string' },
    ],
  },
});
