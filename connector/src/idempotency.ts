/**
 * The `Idempotency-Key` the connector sends on every create (CONTRACT "Idempotency"; issue 12), derived so that
 * Zapier's automatic retry, or a replay from the Zap history, of the SAME step with the SAME input sends the SAME key,
 * and Stageline then answers with the first response instead of creating a second item, task or subscription.
 *
 * What Zapier offers (zapier-platform-core 19.1.0, types/custom.d.ts `Bundle.meta`): `zap.id` (marked deprecated but
 * still the only identifier of the Zap; absent under `zapier-platform invoke` and the app tester), `isLoadingSample`
 * (a run started by hand in the Zap editor), `withSearch`, `timezone`, paging fields. There is no id of the Zap run or
 * of the step, so two genuinely separate runs of one Zap with identical input cannot be told apart from a retry; the
 * optional input field `idempotency_key` ("Idempotency key (advanced)") lets a Zap owner make runs distinct.
 *
 * The key: `zap-` + hex SHA-256 of the canonical JSON (object keys sorted, see `canonicalJson`) of
 * `{ v: 1, zap, sample, action, body, override }`:
 * - `zap`: `bundle.meta.zap.id` as a string, or null when Zapier gives none (then keys are per company, action and
 *   body only: still stable across retries, shared by every Zap of the company that sends the same body);
 * - `sample`: `bundle.meta.isLoadingSample === true`, so a test in the Zap editor never replays into a live run;
 * - `action`: the operation key (`create_item`, `create_task`, `subscribe:item.created`);
 * - `body`: the exact JSON body sent (after coercion and the contract check);
 * - `override`: the trimmed `idempotency_key` input, or null. It is hashed together with the rest, so it can only
 *   make keys more distinct: two steps mapping the same value never collide, and a changed body still creates.
 * The result is 68 printable ASCII characters, inside the contract's 1..255.
 */
import crypto from 'node:crypto';
import type { Bundle } from 'zapier-platform-core';
import { IDEMPOTENCY_KEY_TTL_SECONDS } from '@stageline/shared';

/** Every derived key starts with this (the rest is 64 lowercase hex digits). */
export const IDEMPOTENCY_KEY_PREFIX = 'zap-';

/** The input field key of the optional override on Create Item and Create Task. */
export const IDEMPOTENCY_OVERRIDE_FIELD = 'idempotency_key';

/** Version of the derivation; bump it if the hashed fields change, so old and new keys never meet. */
const DERIVATION_VERSION = 1;

/**
 * Canonical JSON of a JSON-like value: object keys in code-unit order, no whitespace, `undefined` members left out
 * (as JSON.stringify does). Arrays keep their order. Two values equal as JSON give the same string.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const entries = Object.keys(value)
    .sort()
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
  return `{${entries.join(',')}}`;
}

/** What a key is derived from (see the module comment). */
export interface IdempotencyKeyParts {
  /** The operation key, e.g. `create_item`. */
  action: string;
  /** The exact JSON body of the request. */
  body: unknown;
  /** `bundle.meta.zap.id`, when Zapier gives one. */
  zapId?: string | null;
  /** `bundle.meta.isLoadingSample`. */
  loadingSample?: boolean;
  /** The user's "Idempotency key (advanced)" value, when set. */
  override?: string | null;
}

/** `zap-` + hex SHA-256 of the canonical JSON of the parts. Pure and deterministic. */
export function deriveIdempotencyKey(parts: IdempotencyKeyParts): string {
  const material = canonicalJson({
    v: DERIVATION_VERSION,
    zap: parts.zapId ?? null,
    sample: parts.loadingSample === true,
    action: parts.action,
    body: parts.body,
    override: parts.override ?? null,
  });
  return keyOf(material);
}

/** `zap-` + hex SHA-256 of `material` (UTF-8). */
function keyOf(material: string): string {
  return IDEMPOTENCY_KEY_PREFIX + crypto.createHash('sha256').update(material, 'utf8').digest('hex');
}

/**
 * The key to use after `previousKey` was answered with the replay of a resource that no longer exists (a REST-hook
 * subscription deleted since, e.g. the Zap was turned off and on within 24 hours): derived from both, so every retry
 * walks the same chain of keys and still creates at most one new resource.
 */
export function nextIdempotencyKey(previousKey: string, goneId: string): string {
  return keyOf(canonicalJson({ v: DERIVATION_VERSION, previous: previousKey, gone: goneId }));
}

/** The override from the step's input: the trimmed text of `idempotency_key`, or null when blank or absent. */
function overrideOf(inputData: Readonly<Record<string, unknown>> | undefined): string | null {
  const raw = inputData?.[IDEMPOTENCY_OVERRIDE_FIELD];
  if (raw === undefined || raw === null) return null;
  const text = String(raw).trim();
  return text === '' ? null : text;
}

/**
 * The key of one create request of a step: `deriveIdempotencyKey` with the Zap id and sample flag of `bundle.meta`
 * and the override of `bundle.inputData` (`withOverride` false for requests the field does not belong to, e.g.
 * REST-hook subscribes). Never throws: any override text is fine, since only its hash is sent.
 */
export function idempotencyKeyFor(
  bundle: Pick<Bundle, 'meta' | 'inputData'>,
  action: string,
  body: unknown,
  withOverride = true,
): string {
  const meta = (bundle.meta ?? {}) as Partial<Bundle['meta']>;
  const zapId = meta.zap?.id;
  return deriveIdempotencyKey({
    action,
    body,
    zapId: zapId === undefined || zapId === null ? null : String(zapId),
    loadingSample: meta.isLoadingSample === true,
    override: withOverride ? overrideOf(bundle.inputData) : null,
  });
}

/** Hours Stageline keeps a key (CONTRACT "Idempotency"), for help texts. */
const TTL_HOURS = IDEMPOTENCY_KEY_TTL_SECONDS / 3600;

/** The optional "Idempotency key (advanced)" input field of Create Item and Create Task. */
export const idempotencyKeyInputField = {
  key: IDEMPOTENCY_OVERRIDE_FIELD,
  label: 'Idempotency Key (Advanced)',
  type: 'string',
  required: false,
  helpText:
    `Leave empty: Zapier's retries of this step never create twice, and runs with exactly the same values within ${TTL_HOURS} hours ` +
    'create only once (the later ones return the first result). To make every run distinct, map a value unique to the ' +
    "run, such as the trigger record's ID.",
} as const;
