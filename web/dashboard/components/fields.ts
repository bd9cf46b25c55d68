import { ApiError } from '../api';

/**
 * The API's validation message for `name` (or for anything inside it: `rules.productIds[2]` is
 * shown beside the rules' product list, `rules.productIds`), ready for a field's `error` prop.
 */
export function fieldError(error: unknown, name: string): string | undefined {
  if (!(error instanceof ApiError) || !error.field) return undefined;
  const f = error.field;
  return f === name || f.startsWith(`${name}.`) || f.startsWith(`${name}[`) ? error.detail : undefined;
}

/** True when the error names one of `names`: it is then shown beside that field, not only on top. */
export const namesAField = (error: unknown, names: string[]): boolean => names.some((n) => fieldError(error, n) !== undefined);
