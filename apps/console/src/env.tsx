// The environment every read and write uses (sandbox / production), switched from the header.
import { createContext, useContext } from 'react';

export type Env = 'sandbox' | 'production';

export const EnvContext = createContext<{ env: Env; setEnv: (env: Env) => void }>({ env: 'sandbox', setEnv: () => {} });

export function useEnv(): Env {
  return useContext(EnvContext).env;
}

/** The environment is not a secret: it is remembered across reloads. */
export function storedEnv(): Env {
  return window.localStorage.getItem('console.env') === 'production' ? 'production' : 'sandbox';
}

export function rememberEnv(env: Env): void {
  window.localStorage.setItem('console.env', env);
}
