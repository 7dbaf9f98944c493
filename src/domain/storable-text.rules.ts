/**
 * Storable text: what every free-text value of a stored JSON document (a group's properties, an access
 * rule's values and property keys) must be. No NUL, which PostgreSQL's text and jsonb refuse, and no
 * lone surrogate, which PostgreSQL refuses and SQLite would store: either would make the two engines
 * differ. The one definition; the rules modules that take such text call it.
 */
export const isStorableText = (text: string): boolean => !text.includes('\u0000') && text.isWellFormed();

/** Why text is not storable, as the refusals word it. */
export const UNSTORABLE_TEXT = 'NUL or a lone surrogate';
