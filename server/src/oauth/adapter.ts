/**
 * oidc-provider's storage Adapter over `oauth_records` (docs/oauth-storage.md; oidc-provider's Adapter interface:
 * upsert, find, findByUid, findByUserCode, consume, destroy, revokeByGrantId). Bearer secrets (tokens, codes,
 * registration access tokens) are stored under `base64url(sha256(id))` and without their `jti`; a client's secret is
 * stored only as `client_secret_sha256` (the provider compares a presented secret by hash: see provider.ts).
 */
import { createHash } from "node:crypto";
import type { SqlRunner } from "../db/sql";
import {
  consumeOAuthRecord,
  destroyOAuthRecord,
  findOAuthRecord,
  findOAuthRecordByUid,
  findOAuthRecordByUserCode,
  revokeOAuthGrant,
  upsertOAuthRecord,
  type OAuthRecordRow,
} from "../db/oauth-records";

/**
 * Models issued under a grant that must never outlive it: written only while their `Grant` record exists
 * (db/oauth-records.ts `upsertOAuthRecord` with `requiresGrant`).
 */
const GRANT_BOUND_MODELS = new Set(["AccessToken", "RefreshToken", "AuthorizationCode"]);

/** What each model is called in an `invalid_grant` description. */
const LABELS: Record<string, string> = { AuthorizationCode: "authorization code", RefreshToken: "refresh token" };

/** Models whose id is a bearer secret: stored hashed, never as given. */
export const BEARER_MODELS = new Set([
  "AccessToken",
  "RefreshToken",
  "AuthorizationCode",
  "RegistrationAccessToken",
  "InitialAccessToken",
  "ClientCredentials",
  "DeviceCode",
  "BackchannelAuthenticationRequest",
]);

/**
 * Marks a `Client` record that only names an app known by its Client ID Metadata Document (CIMD). oidc-provider keeps
 * such clients in its memory cache, never in the adapter, so the resource side (`/me`, rate-limit key names) and the
 * console's Connected apps page, which read the `Client` record's `client_name`, would see only the URL. The consent
 * step writes one (`recordMetadataDocumentClient`); the adapter never hands it to the provider (`find` answers
 * undefined), so the provider still fetches and caches the document itself (docs/oauth-storage.md).
 */
export const METADATA_DOCUMENT_MARK = "stageline_metadata_document";

/** True for a client id that is a Client ID Metadata Document URL (DCR and console clients get random ids). */
export function isMetadataDocumentClientId(clientId: string): boolean {
  return clientId.startsWith("https://");
}

/**
 * Writes (or refreshes) the naming `Client` record of a CIMD client: `{ client_id, client_name, <mark>: true }`,
 * no company, expiring after `ttlSeconds` (the grant's lifetime: it names the app for as long as a grant may live).
 * @param clientName the name from the app's metadata document; cut to 200 characters.
 */
export async function recordMetadataDocumentClient(sql: SqlRunner, clientId: string, clientName: string, ttlSeconds: number): Promise<void> {
  await upsertOAuthRecord(sql, {
    model: "Client",
    id: clientId,
    payload: { client_id: clientId, client_name: clientName.slice(0, 200), [METADATA_DOCUMENT_MARK]: true },
    grantId: null,
    uid: null,
    userCode: null,
    accountId: null,
    clientId,
    expiresInSeconds: ttlSeconds,
  });
}

/** `base64url(sha256(value))`: the stored form of a bearer secret's id and of a client secret. */
export function sha256b64u(value: string): string {
  return createHash("sha256").update(value, "utf8").digest("base64url");
}

type Payload = Record<string, unknown>;

/** The adapter instance oidc-provider creates per model (`new Adapter(name)`). */
export interface OAuthAdapter {
  upsert(id: string, payload: Payload, expiresIn: number | undefined): Promise<void>;
  find(id: string): Promise<Payload | undefined>;
  findByUid(uid: string): Promise<Payload | undefined>;
  findByUserCode(userCode: string): Promise<Payload | undefined>;
  consume(id: string): Promise<void>;
  destroy(id: string): Promise<void>;
  revokeByGrantId(grantId: string): Promise<void>;
}

const str = (v: unknown): string | null => (typeof v === "string" && v ? v : null);

/** The error oidc-provider answers `400 invalid_grant` with (its `errors.InvalidGrant`). */
export type InvalidGrantError = new (description: string) => Error;

/**
 * The Adapter class for oidc-provider's `adapter` option, bound to the database `sql`.
 *
 * One use means one use (issue 39; OAuth 2.1 sections 4.1.3 and 4.3.1): oidc-provider reads a code or refresh token,
 * checks that it is not consumed, and only later calls `consume`, so N requests presenting it at once would all pass
 * the check. Here `consume` is a compare-and-set (`consumeOAuthRecord`): only the first caller goes on; every other one
 * is handled as the reuse it is (its grant revoked, as oidc-provider does for a reuse it sees, then `invalid_grant`),
 * and a token or code is written only while its grant exists, so the first caller's tokens do not survive that
 * revocation either.
 * @param InvalidGrant oidc-provider's `errors.InvalidGrant`, thrown by `consume` and `upsert` as above.
 * @returns a constructor `new (model: string) => OAuthAdapter`.
 */
export function oauthAdapterClass(sql: SqlRunner, InvalidGrant: InvalidGrantError): new (model: string) => OAuthAdapter {
  // oidc-provider revokes a grant through every model's adapter at once (helpers/revoke.js): one revocation serves them.
  const revoking = new Map<string, Promise<unknown>>();
  const revoke = (grantId: string): Promise<unknown> => {
    let running = revoking.get(grantId);
    if (!running) {
      running = revokeOAuthGrant(sql, grantId).finally(() => revoking.delete(grantId));
      revoking.set(grantId, running);
    }
    return running;
  };

  return class RecordsAdapter implements OAuthAdapter {
    private readonly bearer: boolean;
    constructor(private readonly model: string) {
      this.bearer = BEARER_MODELS.has(model);
    }

    private key(id: string): string {
      return this.bearer ? sha256b64u(id) : id;
    }

    private revive(row: OAuthRecordRow | undefined, id?: string): Payload | undefined {
      if (!row) return undefined;
      // A CIMD client's naming record is not a registration: the provider resolves the client by its document.
      if (this.model === "Client" && row.payload[METADATA_DOCUMENT_MARK] === true) return undefined;
      const payload: Payload = { ...row.payload };
      if (this.bearer && id !== undefined) payload.jti = id;
      if (row.consumed) payload.consumed = row.consumedAt;
      if (this.model === "Client" && typeof payload.client_secret_sha256 === "string") {
        // The provider's compareClientSecret (patched in provider.ts) hashes the presented secret and compares it
        // with this value; the secret itself is not stored.
        payload.client_secret = payload.client_secret_sha256;
        delete payload.client_secret_sha256;
      }
      return payload;
    }

    async upsert(id: string, payload: Payload, expiresIn: number | undefined): Promise<void> {
      const stored: Payload = { ...payload };
      if (this.bearer) delete stored.jti;
      if (this.model === "Client" && typeof stored.client_secret === "string") {
        stored.client_secret_sha256 = sha256b64u(stored.client_secret);
        delete stored.client_secret;
      }
      const written = await upsertOAuthRecord(
        sql,
        {
          model: this.model,
          id: this.key(id),
          payload: stored,
          grantId: str(payload.grantId),
          uid: str(payload.uid),
          userCode: str(payload.userCode),
          accountId: str(payload.accountId),
          clientId: str(payload.clientId) ?? str(payload.client_id),
          expiresInSeconds: typeof expiresIn === "number" && expiresIn > 0 ? Math.ceil(expiresIn) : null,
        },
        GRANT_BOUND_MODELS.has(this.model),
      );
      if (!written) throw new InvalidGrant("grant revoked");
    }

    async find(id: string): Promise<Payload | undefined> {
      return this.revive(await findOAuthRecord(sql, this.model, this.key(id)), id);
    }

    async findByUid(uid: string): Promise<Payload | undefined> {
      return this.revive(await findOAuthRecordByUid(sql, this.model, uid));
    }

    async findByUserCode(userCode: string): Promise<Payload | undefined> {
      return this.revive(await findOAuthRecordByUserCode(sql, this.model, userCode));
    }

    async consume(id: string): Promise<void> {
      const outcome = await consumeOAuthRecord(sql, this.model, this.key(id));
      if (outcome.first) return;
      if (outcome.grantId) await revoke(outcome.grantId);
      throw new InvalidGrant(`${LABELS[this.model] ?? this.model} already used`);
    }

    async destroy(id: string): Promise<void> {
      await destroyOAuthRecord(sql, this.model, this.key(id));
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await revoke(grantId);
    }
  };
}
