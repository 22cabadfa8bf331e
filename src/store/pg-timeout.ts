/**
 * STACKER_DATABASE_TIMEOUT: how long stacker waits for its PostgreSQL server to connect or to
 * answer one query before it counts the journal as unwritable (pg-session.ts says how the bound
 * is applied). Kept apart from the driver so that reading the setting does not load it.
 *
 * The default is long enough for a slow disk's commit or a database across a WAN, short enough
 * that a slot on a database that stopped answering is late by seconds, not minutes. The floor
 * keeps an ordinary commit from counting as an outage; the ceiling keeps a slot from waiting so
 * long that its moment has passed.
 */
export const DATABASE_TIMEOUT = { defaultMs: 10_000, floorMs: 1_000, ceilingMs: 5 * 60_000 } as const;
