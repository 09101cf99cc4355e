import type { ProviderDefinition } from '../providers/file.ts';
import { type Db } from '../providers/store.ts';
import { readProviderSetup } from '../providers/reads.ts';
import type { CertifyTarget } from './context.ts';

/** The registry entry of the provider under certification, from the providers file or from Postgres. */

export function targetFromDefinition(def: ProviderDefinition): CertifyTarget {
  return {
    providerId: def.id,
    baseUrl: def.client.baseUrl,
    headers: def.client.headers ?? {},
    payloadKeys: def.payloadKeys,
    currencies: def.currencies,
    statusMapping: def.statusMapping,
    webhookKeyDigests: def.webhookKeys.filter((k) => !k.revokedAt).map((k) => k.sha256),
    ...(def.client.pageLimit !== undefined ? { pageLimit: def.client.pageLimit } : {}),
  };
}

export async function targetFromRegistry(db: Db, providerId: string): Promise<CertifyTarget | undefined> {
  const setup = await readProviderSetup(db, providerId);
  if (!setup) return undefined;
  const keys = await db.query<{ sha256: string }>(
    `select sha256 from platform.provider_api_keys where provider_id = $1 and revoked_at is null`,
    [providerId],
  );
  return {
    providerId,
    baseUrl: setup.client.baseUrl,
    headers: setup.client.headers ?? {},
    payloadKeys: setup.payloadKeys,
    currencies: setup.currencies,
    statusMapping: setup.statusMapping,
    webhookKeyDigests: keys.rows.map((r) => r.sha256),
    ...(setup.client.pageLimit !== undefined ? { pageLimit: setup.client.pageLimit } : {}),
  };
}
