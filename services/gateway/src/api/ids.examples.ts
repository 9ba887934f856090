/** Identifiers and digests the examples share, so that one example refers to another's records. */
export const AGENT_ID = 'agt_7c9e6679742541d8a1b2c3d4e5f60718';
export const CONFIG_ID = 'cfg_3f2a9c0d1e4b4f6a8b7c6d5e4f3a2b1c';
export const NEXT_CONFIG_ID = 'cfg_9b8a7c6d5e4f40312a1b2c3d4e5f6071';
export const CHAT_ID = 'cht_1a2b3c4d5e6f47809a8b7c6d5e4f3a2b';
export const SCHEDULE_ID = 'sch_5e4d3c2b1a0f49e8d7c6b5a493827161';
export const TRIGGER_ID = 'trg_0a1b2c3d4e5f46a7b8c9d0e1f2a3b4c5';
export const REVISION_ID = 'rev_0f1e2d3c4b5a69788796a5b4c3d2e1f0';
/** SHA-256 of `hello`. */
export const SHA256 = '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824';
export const CREATED_AT = '2024-05-01T12:00:00.000Z';
export const UPDATED_AT = '2024-05-02T09:30:00.000Z';
