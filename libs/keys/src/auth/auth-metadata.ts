export const KEY_REQUIREMENT = 'keys:requirement';
export const AUTH_CONTEXT = Symbol('authContext');
