/** The exchange's two regions and the origin each is served from (`STACKER_REGION`). */
export type Region = 'global' | 'eu';

export const REGION_URLS = { global: 'https://whitebit.com', eu: 'https://whitebit.eu' } as const;
