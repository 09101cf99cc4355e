export {
  API_KEY_PREFIX,
  ApiKeyIndex,
  apiKeyDigest,
  generateApiKey,
  looksLikeApiKey,
  newKeyId,
  type ApiKeyEntry,
  type KeyMatch,
  type NewApiKey,
} from './api-keys.ts';
export {
  DEFAULT_POLL_INTERVAL_SECONDS,
  DEFAULT_RATE_LIMIT,
  ProvidersFileError,
  parseProvidersFile,
  readProvidersFile,
  type ProviderDefinition,
  type RateLimitConfig,
  type WebhookKeyDefinition,
} from './file.ts';
export {
  ProviderRegistryError,
  addProvider,
  listProviders,
  loadProviders,
  readProviderSetup,
  readRegistry,
  revokeKey,
  rotateKey,
  type Db,
  type IssuedKey,
  type LoadReport,
  type ProviderRuntime,
  type ProviderSetup,
  type ProviderSummary,
  type RegistryData,
} from './store.ts';
export { ProviderRegistryCache, type RegistryCacheOptions, type RegistrySnapshot } from './cache.ts';
