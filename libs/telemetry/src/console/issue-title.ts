/** An issue's title: `Type: message`, either alone, else the event name. */
export function issueTitle(errorType: string | null, message: string | null, eventName: string): string {
  const type = errorType?.trim() || null;
  const text = message?.trim() || null;
  if (type && text) return `${type}: ${text}`;
  return type ?? text ?? eventName;
}
