/**
 * Partner credentials in the registry are stored as written in the providers file: a header value may
 * hold `${ENV_VAR}` references, kept as references in platform.providers and resolved from each
 * process's own environment when it builds a partner client. The database never holds the secret, and
 * a credential rotates by changing the environment, not the database.
 */

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** The environment variables a header value refers to, in order. */
export function referencedVariables(value: string): string[] {
  return [...value.matchAll(REFERENCE)].map((m) => m[1]!);
}

/**
 * Replaces every `${NAME}` with its value from `env`. Names that are unset or empty are returned in
 * `missing` (and replaced by ''); never a value in any message.
 */
export function resolveReferences(
  value: string,
  env: NodeJS.ProcessEnv,
): { value: string; missing: string[] } {
  const missing: string[] = [];
  const resolved = value.replace(REFERENCE, (_, name: string) => {
    const v = env[name];
    if (v === undefined || v === '') {
      missing.push(name);
      return '';
    }
    return v;
  });
  return { value: resolved, missing };
}

export class UnresolvedCredentialError extends Error {
  override name = 'UnresolvedCredentialError';
}

/** Resolves every header of a provider; refuses (naming header and variable only) if one is missing. */
export function resolveHeaders(
  providerId: string,
  headers: Readonly<Record<string, string>>,
  env: NodeJS.ProcessEnv,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, template] of Object.entries(headers)) {
    const { value, missing } = resolveReferences(template, env);
    if (missing.length > 0)
      throw new UnresolvedCredentialError(
        `provider ${providerId}: header ${name} needs environment variable ${missing.join(', ')}, not set in this process`,
      );
    out[name] = value;
  }
  return out;
}
