/** Quote a value for a POSIX shell only when it needs it, so a printed command can be pasted as it is. */
export function shellWord(text: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}
