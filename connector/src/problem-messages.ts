/**
 * Turns Stageline error responses (RFC 9457 problem details, CONTRACT "Errors") into messages a Zap owner can act on.
 * Pure: no Zapier objects, so every status is unit tested (test/problem-messages.test.ts).
 */
import { IDEMPOTENCY_KEY_TTL_SECONDS, ProblemSchema, isRequestId, type Problem, type ProblemFieldError } from '@stageline/shared';

/** Where users manage API keys (spec "Authentication": Company Settings, API Keys). */
export const API_KEYS_LOCATION = 'Company Settings → API Keys';

/** A user-facing error: the message, a stable code for Zapier, the HTTP status. */
export interface DescribedProblem {
  message: string;
  /** `AuthenticationError` for 401 (Zapier then asks the user to reconnect), else the problem `code`. */
  code: string;
  status: number;
  /**
   * True when the request may simply be sent again later (409 `idempotency_key_in_use`): the middleware then throws
   * Zapier's ThrottledError with the `Retry-After` delay instead of a plain error.
   */
  retryable?: boolean;
}

/** How the response came about, beyond status and body (read from its headers by the middleware). */
export interface ProblemContext {
  /** `Idempotent-Replayed: true`: the stored answer of an earlier request with the same Idempotency-Key. */
  replayed?: boolean;
  /** The `Request-Id` response header (CONTRACT "Request ids and the request log"), used when the body has no `request_id`. */
  requestId?: string | null;
}

/** Hours Stageline keeps an Idempotency-Key and its answer (CONTRACT "Idempotency"). */
const KEY_TTL_HOURS = IDEMPOTENCY_KEY_TTL_SECONDS / 3600;

/** Reads a problem body; tolerates partial bodies (a proxy's error page, a body without `code`). */
function readProblem(body: unknown): Partial<Problem> {
  const parsed = ProblemSchema.safeParse(body);
  if (parsed.success) return parsed.data;
  if (body !== null && typeof body === 'object') {
    const loose = body as Record<string, unknown>;
    const out: Partial<Problem> = {};
    if (typeof loose.detail === 'string') out.detail = loose.detail;
    if (typeof loose.title === 'string') out.title = loose.title;
    if (typeof loose.current_version === 'number') out.current_version = loose.current_version;
    if (Array.isArray(loose.errors)) {
      out.errors = loose.errors.filter(
        (e): e is ProblemFieldError =>
          e !== null && typeof e === 'object' && typeof (e as ProblemFieldError).message === 'string',
      );
    }
    return out;
  }
  return {};
}

/**
 * The id of the request an error response answered (CONTRACT "Request ids and the request log"): the body's
 * `request_id`, else the `Request-Id` header; undefined when neither is an id to show (a proxy's own error page).
 */
export function requestIdOf(body: unknown, header: string | null | undefined): string | undefined {
  const fromBody = body !== null && typeof body === 'object' ? (body as { request_id?: unknown }).request_id : undefined;
  if (isRequestId(fromBody)) return fromBody;
  return isRequestId(header) ? header : undefined;
}

/**
 * `message` ending with `(request <id>)`, which a Zap owner pastes into the console's Requests search (after a field
 * list on a line of its own); `message` as it is when there is no id.
 */
export function withRequestId(message: string, requestId: string | undefined): string {
  if (requestId === undefined) return message;
  const afterList = message.slice(message.lastIndexOf('\n') + 1).startsWith('- ');
  return `${message}${message === '' ? '' : afterList ? '\n' : ' '}(request ${requestId})`;
}

/** "path: message" per failing field; the path is left out when the message already names it. */
export function formatFieldErrors(errors: readonly ProblemFieldError[] | undefined): string {
  if (!errors || errors.length === 0) return '';
  const lines = errors.map((e) => {
    const path = typeof e.path === 'string' ? e.path : '';
    return path === '' || e.message.includes(path) ? e.message : `${path}: ${e.message}`;
  });
  return [...new Set(lines)].map((line) => `- ${line}`).join('\n');
}

/** Ends a sentence with a period unless it already ends with punctuation. */
function sentence(text: string): string {
  const t = text.trim();
  if (t === '') return '';
  return /[.!?)]$/.test(t) ? t : `${t}.`;
}

/** Joins non-empty parts: sentences with a space, field lists (lines starting "- ") on lines of their own. */
function join(...parts: string[]): string {
  let out = '';
  let afterList = false;
  for (const part of parts) {
    if (part.trim() === '') continue;
    const isList = part.startsWith('- ');
    if (out !== '') out += isList || afterList ? '\n' : ' ';
    out += part;
    afterList = isList;
  }
  return out;
}

/**
 * The user-facing description of an error response with `status` and parsed JSON `body` (undefined when the body
 * was not JSON; `content` is then used as a short excerpt). The message ends with `(request <id>)` when the body's
 * `request_id` or `context.requestId` (the `Request-Id` header) names the request (CONTRACT "Request ids and the
 * request log"). Follows CONTRACT "Errors": 400 lists the failing fields,
 * 401/402/403 say what to fix in Stageline, 409 carries `current_version`, 422 lists the unresolved references;
 * and CONTRACT "Idempotency": 409 `idempotency_key_in_use` is retryable, 422 `idempotency_key_reused` says what
 * to change; 422 `pipeline_archived` (CONTRACT "Pipelines, blueprints, transitions") says to pick another pipeline
 * or restore it; 409 `ambiguous_match` lists the matching items and 422 `upsert_unavailable` says what the upsert
 * needs (CONTRACT "Upsert"); and a replayed error (`context.replayed`) says it is the stored answer of an earlier attempt.
 */
export function describeProblem(status: number, body: unknown, content = '', context: ProblemContext = {}): DescribedProblem {
  const described = describeStatus(status, body, content);
  const note = context.replayed
    ? `This is Stageline's stored answer to an earlier attempt of this step with the same values (kept ${KEY_TTL_HOURS} hours). ` +
      'Change a value of the step, or fill Idempotency Key (Advanced) with a new value, to send it as a new request.'
    : '';
  return { ...described, message: withRequestId(join(described.message, note), requestIdOf(body, context.requestId)) };
}

/** The description by code (the idempotency codes, `pipeline_archived`) or status, without the replay note. */
function describeStatus(status: number, body: unknown, content: string): DescribedProblem {
  const problem = readProblem(body);
  const detail = sentence(problem.detail ?? (problem.title ? problem.title : ''));
  const fields = formatFieldErrors(problem.errors);
  const code = problem.code ?? `http_${status}`;
  const excerpt = detail === '' && content.trim() !== '' ? sentence(`Response: ${content.trim().slice(0, 200)}`) : '';

  if (problem.code === 'idempotency_key_in_use') {
    return {
      status,
      code,
      retryable: true,
      message: join(
        'Stageline is still working on an earlier attempt of this step with the same values.',
        detail,
        'Zapier will try again shortly and then gets that attempt\'s result; nothing is created twice.',
      ),
    };
  }
  if (problem.code === 'idempotency_key_reused') {
    return {
      status,
      code,
      message: join(
        `Stageline refused this request: its Idempotency-Key was already used for a different request within the last ${KEY_TTL_HOURS} hours.`,
        detail,
        'If you filled Idempotency Key (Advanced), map a value that is unique to each run (such as the trigger record\'s ID), or leave it empty.',
      ),
    };
  }

  if (problem.code === 'ambiguous_match') {
    const matches = Array.isArray(problem.matches) && problem.matches.length > 0 ? `Matching items: ${problem.matches.join(', ')}.` : '';
    return {
      status,
      code,
      message: join(
        "Several items match this one under the pipeline's duplicate rules, so Stageline did not know which to update and changed nothing.",
        detail,
        matches,
        'Merge or delete the duplicates in Stageline, or use Find Item and Update Item to pick the item yourself.',
      ),
    };
  }
  if (problem.code === 'upsert_unavailable') {
    return {
      status,
      code,
      message: join(
        'Stageline cannot tell whether this item exists already.',
        detail,
        "Fill the fields the pipeline's duplicate detection compares (e.g. its email field), or ask an owner or admin to turn on duplicate detection for the pipeline; otherwise use Create Item.",
      ),
    };
  }

  if (problem.code === 'pipeline_archived') {
    return {
      status,
      code,
      message: join(
        'The pipeline of this step is archived in Stageline, so no item can be created in it.',
        detail,
        'Choose another pipeline (archived pipelines are no longer offered in the dropdown), or ask an owner or admin to restore it in Stageline.',
      ),
    };
  }

  switch (status) {
    case 400:
      return {
        status,
        code,
        message: join('Stageline rejected the request because some values are not valid.', detail, fields, excerpt),
      };
    case 401:
      return {
        status,
        code: 'AuthenticationError',
        message: join(
          'Stageline did not accept the API key (it is missing, wrong, revoked or expired).',
          detail,
          `Create a new key in Stageline under ${API_KEYS_LOCATION}, then reconnect your Stageline account in Zapier.`,
        ),
      };
    case 402:
      return {
        status,
        code,
        message: join(
          "Your company's Stageline subscription is not active, so the API is unavailable.",
          detail,
          'Ask a Stageline admin of your company to reactivate the subscription, then replay this step.',
        ),
      };
    case 403:
      return {
        status,
        code,
        message: join(
          'This Stageline API key is not allowed to do this.',
          detail,
          `Create a key that has the missing scope in Stageline under ${API_KEYS_LOCATION} (new keys get every scope), then reconnect your Stageline account in Zapier.`,
        ),
      };
    case 404:
      return {
        status,
        code,
        message: join('Stageline could not find it.', detail, 'Check the ID you mapped into this step; it may have been deleted or belong to another company.', excerpt),
      };
    case 409: {
      const version = problem.current_version;
      const now = version === undefined ? 'a newer version' : `version ${version}`;
      return {
        status,
        code,
        message: join(
          `The item changed since it was read: Stageline now has ${now}, but this step sent a different Version.`,
          detail,
          'Map the Version from a step that reads the item right before this one, or leave Version empty to apply the update regardless.',
        ),
      };
    }
    case 413:
      return { status, code, message: join('The request is too large for Stageline (the limit is 1 MiB).', detail, 'Send shorter texts.') };
    case 422: {
      const events = Array.isArray(problem.valid_events) && problem.valid_events.length > 0 ? `Valid events: ${problem.valid_events.join(', ')}.` : '';
      return {
        status,
        code,
        message: join(
          'Stageline could not use some of the values.',
          detail,
          fields,
          events,
          fields === '' ? '' : 'Check the pipeline, stage, status and custom field values of this step.',
        ),
      };
    }
    default:
      if (status >= 500) {
        return {
          status,
          code,
          message: join(`Stageline had a server error (HTTP ${status}).`, detail, excerpt, 'This is usually temporary; try again in a few minutes.'),
        };
      }
      return { status, code, message: join(`Stageline answered with HTTP ${status}.`, detail, fields, excerpt) };
  }
}
